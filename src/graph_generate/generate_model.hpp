// The random model behind `generate` (include/graphtier/graph_generate/generate.hpp): pure functions of
// the seed and of what they describe, so that any thread, in any order, computes the same value.
// Header-only because every function here runs once per edge or per feature element.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graphtier/core/rng.hpp"
#include "graphtier/graph_generate/generate.hpp"

namespace graphtier::graph::detail::generate {

/// Philox stream tags: one per kind of draw, so no two kinds ever share random bits. The bits above
/// the tag carry the attempt number of a redrawn edge.
enum StreamTag : uint64_t {
  kEdgeStream = 1,
  kNodePermutationStream = 2,
  kCommunityStream = 3,
  kCentroidStream = 4,
  kFeatureStream = 5,
  kSplitPermutationStream = 6,
  kTypeSeedStream = 7,      // typed graphs: the seed of each node type's own models
  kRelationSeedStream = 8,  // typed graphs: the seed of each relation's edges
};

inline constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// SplitMix64: 64 fresh bits per call from a state seeded with Philox output. Cheap enough for
/// per-element draws, where a Philox block per element would cap the feature rate.
inline uint64_t splitmix_next(uint64_t& state) {
  state += kGolden;
  return mix64(state);
}

/// A seeded bijection on [0, n) computable forward and backward without memory: a 4-round Feistel
/// network on exactly bits = ceil(log2 n) bits (halves of floor and ceil of bits/2, whose widths
/// swap every round), with cycle walking: re-apply until the value is below n. The domain is below
/// 2n, so a walk takes fewer than 2 steps on average.
class NodePermutation {
 public:
  NodePermutation(int64_t n, uint64_t seed, uint64_t stream) : n_(static_cast<uint64_t>(n)) {
    const int bits = std::max(2, static_cast<int>(std::bit_width(n_ > 0 ? n_ - 1 : 0)));
    low_bits_ = bits / 2;
    high_bits_ = bits - low_bits_;
    for (int r = 0; r < kRounds; ++r) keys_[r] = philox_u64(seed, stream, static_cast<uint64_t>(r));
  }

  int64_t forward(int64_t x) const {
    uint64_t y = static_cast<uint64_t>(x);
    do {
      for (int r = 0; r < kRounds; ++r) {
        // (high: a bits | low: b bits) -> (low: b bits | high ^ F(low): a bits)
        const int a = r % 2 == 0 ? high_bits_ : low_bits_, b = bits() - a;
        const uint64_t high = y >> b, low = y & mask(b);
        y = (low << a) | (high ^ round_function(low, r, a));
      }
    } while (y >= n_);
    return static_cast<int64_t>(y);
  }

  int64_t inverse(int64_t x) const {
    uint64_t y = static_cast<uint64_t>(x);
    do {
      for (int r = kRounds - 1; r >= 0; --r) {
        const int a = r % 2 == 0 ? high_bits_ : low_bits_, b = bits() - a;
        const uint64_t low = y >> a, mixed = y & mask(a);
        y = ((mixed ^ round_function(low, r, a)) << b) | low;
      }
    } while (y >= n_);
    return static_cast<int64_t>(y);
  }

 private:
  static constexpr int kRounds = 4;  // even, so the half widths end where they started
  int bits() const { return high_bits_ + low_bits_; }
  static uint64_t mask(int width) { return (uint64_t{1} << width) - 1; }
  /// Multiplicative hashing: the top `width` bits of a product depend on every input bit, and one
  /// multiply per round keeps the permutation cheap (it runs twice per edge).
  uint64_t round_function(uint64_t half, int r, int width) const {
    return ((half ^ keys_[r]) * 0xD6E8FEB86659FD93ull) >> (64 - width);
  }

  uint64_t n_;
  int high_bits_;
  int low_bits_;
  uint64_t keys_[kRounds];
};

/// Balanced communities on original ids: block b = u div C holds ids [bC, bC + C), and within it
/// the class is rotated by a per-block offset, so each full block holds every class once.
class Communities {
 public:
  Communities(int64_t num_nodes, int64_t num_classes, uint64_t seed)
      : n_(num_nodes), c_(num_classes), key_(philox_u64(seed, kCommunityStream, 0)) {}

  int64_t num_classes() const { return c_; }

  int64_t of(int64_t u) const {
    const int64_t block = u / c_;
    const int64_t slot = u - block * c_;
    const int64_t c = slot + offset(block);
    return c >= c_ ? c - c_ : c;
  }

  /// The node of class `cls` in the block of `u`, or in the block before when the last, partial
  /// block has no such node (the block before exists: block 0 is full because C <= n).
  int64_t move_to_class(int64_t u, int64_t cls) const {
    int64_t block = u / c_;
    int64_t v = member(block, cls);
    if (v >= n_) v = member(block - 1, cls);
    return v;
  }

 private:
  int64_t offset(int64_t block) const {
    return static_cast<int64_t>(bounded_u64(mix64(static_cast<uint64_t>(block) ^ key_), static_cast<uint64_t>(c_)));
  }
  int64_t member(int64_t block, int64_t cls) const {
    int64_t slot = cls - offset(block);
    if (slot < 0) slot += c_;
    return block * c_ + slot;
  }

  int64_t n_;
  int64_t c_;
  uint64_t key_;
};

struct Edge {
  int64_t src;
  int64_t dst;
};

/// Edge k of the stream, in final (scrambled) ids. See generate.hpp for the model.
class EdgeModel {
 public:
  EdgeModel(const GenerateOptions& o, const Communities& communities, const NodePermutation& permutation)
      : seed_(o.seed),
        n_(static_cast<uint64_t>(o.num_nodes)),
        scale_(static_cast<int>(std::bit_width(static_cast<uint64_t>(o.num_nodes) - 1))),
        communities_(communities),
        permutation_(permutation) {
    // 15-bit thresholds, one copy per 16-bit lane (see four_levels): quadrant probabilities are
    // resolved to 1/32768, far below any visible effect on the degree distribution.
    const auto threshold = [](double p) {
      return static_cast<uint64_t>(std::llround(std::clamp(p, 0.0, 1.0) * 32768.0)) * kLaneOnes;
    };
    t_a_ = threshold(o.rmat.a);
    t_ab_ = threshold(o.rmat.a + o.rmat.b);
    t_abc_ = threshold(o.rmat.a + o.rmat.b + o.rmat.c);
    // P(remap) q such that the expected same-class fraction is `homophily`: an untouched edge is
    // same-class with probability 1/C. Above 1/C remap into the source's class, below into another.
    const double c = static_cast<double>(o.num_classes);
    double q = 0;
    if (o.num_classes > 1) {
      const double base = 1.0 / c;
      to_other_class_ = o.homophily < base;
      q = to_other_class_ ? 1.0 - o.homophily * c : (o.homophily - base) / (1.0 - base);
    }
    remap_threshold_ = static_cast<uint64_t>(std::llround(std::clamp(q, 0.0, 1.0) * 4294967296.0));
  }

  Edge draw(uint64_t k) const {
    uint64_t state = 0;
    Edge e{};
    // Redraw ids >= n. Since n > 2^(scale-1), a first quadrant `a` (top bits 0) always lands
    // inside, so for any sensible parameters 64 attempts never run out; if they do, hashing into
    // [0, n) keeps the draw deterministic.
    for (uint64_t attempt = 0;; ++attempt) {
      const PhiloxBlock block = philox_block(seed_, kEdgeStream | (attempt << 8), k);
      const uint64_t first = (static_cast<uint64_t>(block.v[1]) << 32) | block.v[0];
      state = (static_cast<uint64_t>(block.v[3]) << 32) | block.v[2];
      uint64_t src = 0, dst = 0;
      for (int level = 0, word = 0; level < scale_; level += 4, ++word) {
        const uint64_t bits = word == 0 ? first : word == 1 ? state : splitmix_next(state);
        const Nibbles q = four_levels(bits);
        const int take = std::min(4, scale_ - level);  // the last word may need fewer levels
        src = (src << take) | (q.src >> (4 - take));
        dst = (dst << take) | (q.dst >> (4 - take));
      }
      if (src < n_ && dst < n_) {
        e = Edge{static_cast<int64_t>(src), static_cast<int64_t>(dst)};
        break;
      }
      if (attempt == 63) {
        e = Edge{static_cast<int64_t>(bounded_u64(mix64(src), n_)), static_cast<int64_t>(bounded_u64(mix64(dst), n_))};
        break;
      }
    }
    const uint64_t coin = splitmix_next(state);
    if ((coin & 0xFFFFFFFFu) < remap_threshold_) {
      const int64_t c = communities_.num_classes();
      int64_t cls = communities_.of(e.src);
      if (to_other_class_) cls = (cls + 1 + static_cast<int64_t>(bounded_u64(splitmix_next(state), c - 1))) % c;
      e.dst = communities_.move_to_class(e.dst, cls);
    }
    return Edge{permutation_.forward(e.src), permutation_.forward(e.dst)};
  }

 private:
  static constexpr uint64_t kLaneOnes = 0x0001000100010001ull;
  struct Nibbles {
    uint64_t src, dst;  // four id bits each, the first level in the most significant bit
  };

  /// Four R-MAT levels from 64 random bits at once (SWAR): each 16-bit lane holds a 15-bit
  /// uniform u with the lane's top bit set, so that top bit survives u - t exactly when u >= t,
  /// and no lane borrows from the next. The quadrant of a lane is the number of thresholds u
  /// reaches (0..3 = a, b, c, d): its high bit is the source bit, its low bit the destination bit.
  Nibbles four_levels(uint64_t bits) const {
    constexpr uint64_t kLow15 = 0x7FFF7FFF7FFF7FFFull, kTop = 0x8000800080008000ull;
    const uint64_t u = (bits & kLow15) | kTop;
    const uint64_t quadrant = (((u - t_a_) & kTop) >> 15) + (((u - t_ab_) & kTop) >> 15) + (((u - t_abc_) & kTop) >> 15);
    // Moves bit 0 of lanes 0..3 to bits 51..48 (lane 0 highest); no two partial products collide.
    constexpr uint64_t kGather = (uint64_t{1} << 51) | (uint64_t{1} << 34) | (uint64_t{1} << 17) | 1;
    return Nibbles{((((quadrant >> 1) & kLaneOnes) * kGather) >> 48) & 0xF, (((quadrant & kLaneOnes) * kGather) >> 48) & 0xF};
  }

  uint64_t seed_;
  uint64_t n_;
  int scale_;
  uint64_t t_a_ = 0, t_ab_ = 0, t_abc_ = 0;  // thresholds in every 16-bit lane
  bool to_other_class_ = false;
  uint64_t remap_threshold_ = 0;  // compared with 32 random bits
  const Communities& communities_;
  const NodePermutation& permutation_;
};

/// Edge k of a relation between two node types (generate.hpp, typed graphs): each end drawn
/// from the R-MAT marginal over its own type's ids, so that both ends have skewed degrees
/// without a square R-MAT over two id spaces of different sizes, then scrambled by its type's
/// permutation. Ids are local to each type.
class CrossTypeEdgeModel {
 public:
  CrossTypeEdgeModel(uint64_t seed, const RmatParams& rmat, const NodePermutation& src_order, int64_t num_src,
                     const NodePermutation& dst_order, int64_t num_dst)
      : seed_(seed), src_(num_src, rmat.c + rmat.d()), dst_(num_dst, rmat.b + rmat.d()), src_order_(src_order),
        dst_order_(dst_order) {}

  Edge draw(uint64_t k) const {
    const PhiloxBlock block = philox_block(seed_, kEdgeStream, k);
    uint64_t state = (static_cast<uint64_t>(block.v[1]) << 32) | block.v[0];
    const int64_t src = src_.draw(state);
    state ^= (static_cast<uint64_t>(block.v[3]) << 32) | block.v[2];
    const int64_t dst = dst_.draw(state);
    return Edge{src_order_.forward(src), dst_order_.forward(dst)};
  }

 private:
  /// Ids in [0, n) whose bits, most significant first, are 1 with probability `p_one`: the
  /// marginal of one end of an R-MAT draw. Four bits per 64 random bits (15 in each 16-bit lane).
  class SkewedIds {
   public:
    SkewedIds(int64_t n, double p_one)
        : n_(static_cast<uint64_t>(n)),
          scale_(static_cast<int>(std::bit_width(static_cast<uint64_t>(n) - 1))),
          threshold_(static_cast<uint64_t>(std::llround(std::clamp(p_one, 0.0, 1.0) * 32768.0))) {}

    int64_t draw(uint64_t& state) const {
      uint64_t id = 0;
      // Bits are 0 more often than 1 (p_one <= 1/2 for sensible parameters), so a draw lands
      // below n at least half the time; past 64 attempts hashing keeps it deterministic.
      for (int attempt = 0; attempt < 64; ++attempt) {
        id = 0;
        for (int level = 0; level < scale_; level += 4) {
          const uint64_t bits = splitmix_next(state);
          const int take = std::min(4, scale_ - level);
          for (int lane = 0; lane < take; ++lane) {
            id = (id << 1) | (((bits >> (16 * lane)) & 0x7FFF) < threshold_ ? 1u : 0u);
          }
        }
        if (id < n_) return static_cast<int64_t>(id);
      }
      return static_cast<int64_t>(bounded_u64(mix64(id), n_));
    }

   private:
    uint64_t n_;
    int scale_;
    uint64_t threshold_;  // compared with 15 random bits
  };

  uint64_t seed_;
  SkewedIds src_, dst_;
  const NodePermutation& src_order_;
  const NodePermutation& dst_order_;
};

/// Arrival step of each final node id in a growing graph (generate.hpp, Timestamps): step
/// floor(u * steps / n) of its original id u, so nodes arrive in original-id order.
class ArrivalTimes {
 public:
  ArrivalTimes(int64_t num_nodes, int64_t steps, const NodePermutation& permutation)
      : n_(num_nodes), steps_(steps), permutation_(permutation) {}
  int64_t of(int64_t v) const {
    // 128 bits: u * steps overflows 64 when both are near 2^62.
    const auto u = static_cast<unsigned __int128>(permutation_.inverse(v));
    return static_cast<int64_t>(u * static_cast<uint64_t>(steps_) / static_cast<uint64_t>(n_));
  }

 private:
  int64_t n_;
  int64_t steps_;
  const NodePermutation& permutation_;
};

/// Class of each final node id: the community of its original id.
class LabelModel {
 public:
  LabelModel(const Communities& communities, const NodePermutation& permutation)
      : communities_(communities), permutation_(permutation) {}
  int32_t label(int64_t v) const { return static_cast<int32_t>(communities_.of(permutation_.inverse(v))); }

 private:
  const Communities& communities_;
  const NodePermutation& permutation_;
};

/// Feature rows: alpha * (s * centroid(label) + noise). Noise is Irwin-Hall(4) on bytes, i.e. the
/// sum of four uniform bytes, standardised: bell-shaped, mean 0, variance 1, and two values per
/// 64 random bits with no transcendental functions (Box-Muller would dominate the cost).
class FeatureModel {
 public:
  FeatureModel(uint64_t seed, int64_t dim, int64_t num_classes, double class_separation)
      : seed_(seed), dim_(dim), words_per_class_((dim + 63) / 64) {
    signs_.resize(static_cast<std::size_t>(num_classes * words_per_class_));
    for (int64_t i = 0; i < static_cast<int64_t>(signs_.size()); ++i) {
      signs_[static_cast<std::size_t>(i)] = philox_u64(seed, kCentroidStream, static_cast<uint64_t>(i));
    }
    // Centroids differ in about dim/2 coordinates by 2s, so their distance is s * sqrt(2 dim).
    const double s = dim > 0 ? class_separation / std::sqrt(2.0 * static_cast<double>(dim)) : 0.0;
    const double alpha = 1.0 / std::sqrt(1.0 + s * s);
    constexpr double kMean = 4 * 127.5, kStd = 147.80138700296678;  // sqrt(4 * (256^2 - 1) / 12)
    noise_scale_ = static_cast<float>(alpha / kStd);
    noise_offset_ = static_cast<float>(-alpha * kMean / kStd);
    signal_by_sign_[1] = static_cast<float>(alpha * s);
    signal_by_sign_[0] = -signal_by_sign_[1];
  }

  /// Writes the `dim` values of node v (whose class is `label`) to out.
  void row(int64_t v, int32_t label, float* out) const {
    uint64_t state = philox_u64(seed_, kFeatureStream, static_cast<uint64_t>(v));
    const uint64_t* signs = signs_.data() + static_cast<int64_t>(label) * words_per_class_;
    for (int64_t j = 0; j < dim_; j += 2) {
      const uint64_t w = splitmix_next(state);
      // Pairwise byte sums in four 16-bit lanes, then two sums of four bytes each.
      const uint64_t pairs = (w & 0x00FF00FF00FF00FFull) + ((w >> 8) & 0x00FF00FF00FF00FFull);
      const uint32_t lo = static_cast<uint32_t>((pairs & 0xFFFF) + ((pairs >> 16) & 0xFFFF));
      const uint32_t hi = static_cast<uint32_t>(((pairs >> 32) & 0xFFFF) + (pairs >> 48));
      out[j] = value(lo, signs, j);
      if (j + 1 < dim_) out[j + 1] = value(hi, signs, j + 1);
    }
  }

 private:
  float value(uint32_t byte_sum, const uint64_t* signs, int64_t j) const {
    // The sign bit indexes {-signal, +signal}: a random sign would defeat a branch predictor.
    const uint64_t positive = (signs[j >> 6] >> (j & 63)) & 1;
    return static_cast<float>(byte_sum) * noise_scale_ + noise_offset_ + signal_by_sign_[positive];
  }

  uint64_t seed_;
  int64_t dim_;
  int64_t words_per_class_;
  std::vector<uint64_t> signs_;  // num_classes x words_per_class_ bits: +1 where set
  float noise_scale_ = 0, noise_offset_ = 0;
  float signal_by_sign_[2] = {0, 0};
};

}  // namespace graphtier::graph::detail::generate

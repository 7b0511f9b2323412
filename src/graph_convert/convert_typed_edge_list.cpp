// Front door of typed edge-list conversion (convert.hpp, TypedEdgeListInput): `src dst TYPE
// [weight]` lines, and optionally `<type><id> <class>` labels, to a typed dataset (docs/format.md,
// Heterogeneous datasets).
//
// The per-type ids become global ones only once every type's count is known (after the whole
// file), so the edges are parsed once and held: 17 bytes each as read, 32 more while the
// reverse relations are found, then 8 more grouping them by relation while the shared typed CSC
// builder (write_typed_csc) places them, 8 bytes an entry. A relation given no reverse gets one
// (add_missing_reverses): its edges are held twice, once each way.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "convert_csc.hpp"
#include "convert_session.hpp"
#include "convert_typed.hpp"
#include "text_lines.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {

namespace {

using ::graphtier::detail::concat;
using detail::ParseError;
using detail::quote_line;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// The next field of [p, eol): skips blanks and one comma before it, ends at a blank or comma.
std::string_view next_field(const char*& p, const char* eol) {
  while (p < eol && is_blank(*p)) ++p;
  if (p < eol && *p == ',') {
    ++p;
    while (p < eol && is_blank(*p)) ++p;
  }
  const char* start = p;
  while (p < eol && !is_blank(*p) && *p != ',') ++p;
  return {start, static_cast<std::size_t>(p - start)};
}

/// A non-negative decimal integer filling `field`, or false.
bool parse_id(std::string_view field, int64_t& value) {
  if (field.empty() || field.size() > 18) return false;  // 18 digits cannot overflow int64
  int64_t v = 0;
  for (const char c : field) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  value = v;
  return true;
}

/// An edge type as written: `A-B` (relation "to") or `A:rel:B`.
struct EdgeType {
  std::string src, rel, dst;
  std::string name() const { return src + ":" + rel + ":" + dst; }
};

std::optional<EdgeType> parse_edge_type(std::string_view text) {
  EdgeType t;
  if (const auto a = text.find(':'); a != std::string_view::npos) {
    const auto b = text.find(':', a + 1);
    if (b == std::string_view::npos) return std::nullopt;
    t = {std::string(text.substr(0, a)), std::string(text.substr(a + 1, b - a - 1)), std::string(text.substr(b + 1))};
  } else if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    t = {std::string(text.substr(0, dash)), "to", std::string(text.substr(dash + 1))};
  } else {
    return std::nullopt;
  }
  if (!is_valid_type_name(t.src) || !is_valid_type_name(t.rel) || !is_valid_type_name(t.dst)) return std::nullopt;
  return t;
}

/// One part of the edge file as parsed: ids per type, and each edge's type as an index into the
/// part's own list of the types it met (merged in input order afterwards).
struct EdgeLines {
  std::vector<int64_t> src, dst;
  std::vector<uint16_t> type;
  std::vector<std::string> types;
  bool weighted = false;  // a weight other than 1 was read
};

std::optional<ParseError> parse_edge_lines(std::string_view text, EdgeLines& out) {
  const char* const begin = text.data();
  uint16_t last_index = 0;  // lines of one type come in runs: compare with the last before searching
  return detail::for_each_line(text, [&](const char* line, const char* eol) -> std::optional<std::string> {
    const char* p = line;
    while (p < eol && is_blank(*p)) ++p;
    if (p == eol || *p == '#' || *p == '%') return std::nullopt;
    const std::string_view src = next_field(p, eol), dst = next_field(p, eol), type = next_field(p, eol);
    int64_t s = 0, d = 0;
    if (!parse_id(src, s) || !parse_id(dst, d) || type.empty()) {
      return concat("expected 'src dst TYPE [weight]' with non-negative integer ids (at most 18 digits), got ",
                    quote_line(text, line - begin));
    }
    if (const std::string_view weight = next_field(p, eol); !weight.empty()) {
      const std::string w(weight);
      char* end = nullptr;
      const double value = std::strtod(w.c_str(), &end);
      if (end != w.c_str() + w.size() || !std::isfinite(value)) {
        return concat("the weight is not a number in ", quote_line(text, line - begin));
      }
      out.weighted |= value != 1.0;
    }
    if (!next_field(p, eol).empty()) {
      return concat("unexpected text after 'src dst TYPE weight' in ", quote_line(text, line - begin));
    }
    if (out.types.empty() || type != out.types[last_index]) {
      const auto it = std::find(out.types.begin(), out.types.end(), type);
      if (it == out.types.end()) {
        if (!parse_edge_type(type)) {
          return concat("edge type '", ::graphtier::detail::printable(type),
                        "' is not written A-B or A:rel:B (names of 1 to 64 of A-Z a-z 0-9 _)");
        }
        if (out.types.size() == kMaxRelations) return concat("more than ", kMaxRelations, " edge types");
        out.types.emplace_back(type);
      }
      last_index = static_cast<uint16_t>(std::find(out.types.begin(), out.types.end(), type) - out.types.begin());
    }
    out.src.push_back(s);
    out.dst.push_back(d);
    out.type.push_back(last_index);
    return std::nullopt;
  });
}

/// Node types and relations in order of first appearance, and the edges with per-type ids.
struct TypedEdges {
  std::vector<std::string> types;
  std::map<std::string, int32_t, std::less<>> type_ids;
  std::vector<int64_t> type_count;  // max id + 1 so far
  std::vector<EdgeType> relations;
  std::vector<RelationTypes> relation_types;
  std::map<std::string, uint8_t, std::less<>> relation_ids;  // by the type as written
  std::vector<int64_t> src, dst;
  std::vector<uint8_t> rel;
  bool weighted = false;

  int32_t type_id(const std::string& name) {
    const auto [it, added] = type_ids.emplace(name, static_cast<int32_t>(types.size()));
    if (added) {
      types.push_back(name);
      type_count.push_back(0);
    }
    return it->second;
  }
  void saw(int32_t type, int64_t id) { type_count[static_cast<std::size_t>(type)] = std::max(type_count[static_cast<std::size_t>(type)], id + 1); }
};

TypedEdges read_typed_edges(const detail::ByteSource& source, ThreadPool& pool) {
  TypedEdges g;
  Progress progress("read", static_cast<int64_t>(source.input_size()), "B");
  detail::parse_lines<EdgeLines>(
      source, pool, &progress, [](std::string_view text, EdgeLines& out) { return parse_edge_lines(text, out); },
      [&](std::vector<EdgeLines>& parts, const detail::TextBlock&) {
        for (const EdgeLines& part : parts) {
          std::vector<uint8_t> global(part.types.size());
          for (std::size_t k = 0; k < part.types.size(); ++k) {
            auto it = g.relation_ids.find(part.types[k]);
            if (it == g.relation_ids.end()) {
              const EdgeType t = *parse_edge_type(part.types[k]);
              const std::string name = t.name();
              for (const EdgeType& other : g.relations) {
                if (other.name() == name) {
                  throw FormatError(source.name(), concat("edge types '", part.types[k], "' and another spelling of ",
                                                          name, " name one relation; write it one way"));
                }
              }
              if (g.relations.size() == kMaxRelations) {
                throw FormatError(source.name(), concat("more than ", kMaxRelations, " relations (type_per_edge.bin ",
                                                        "holds one byte per edge)"));
              }
              const int32_t s = g.type_id(t.src), d = g.type_id(t.dst);
              it = g.relation_ids.emplace(part.types[k], static_cast<uint8_t>(g.relations.size())).first;
              g.relations.push_back(t);
              g.relation_types.push_back({s, d});
            }
            global[k] = it->second;
          }
          for (std::size_t e = 0; e < part.src.size(); ++e) {
            const uint8_t r = global[part.type[e]];
            g.saw(g.relation_types[r].src_type, part.src[e]);
            g.saw(g.relation_types[r].dst_type, part.dst[e]);
            g.src.push_back(part.src[e]);
            g.dst.push_back(part.dst[e]);
            g.rel.push_back(r);
          }
          g.weighted |= part.weighted;
        }
      });
  progress.finish();
  if (g.src.empty()) throw FormatError(source.name(), "has no edges");
  return g;
}

/// A label as read: the node (type, per-type id) and its class.
struct LabelLines {
  std::vector<std::string> type;
  std::vector<int64_t> id;
  std::vector<int32_t> label;
};

/// `edges` (the parsed edge file, named `edges_path`) bounds each labelled node: a node no edge
/// reaches would grow its type and shift the global ids of every type after it, so its line is
/// refused (a type no edge has is refused after parsing, with the types there are).
std::optional<ParseError> parse_label_lines(std::string_view text, const TypedEdges& edges,
                                            const std::string& edges_path, LabelLines& out) {
  const char* const begin = text.data();
  return detail::for_each_line(text, [&](const char* line, const char* eol) -> std::optional<std::string> {
    const char* p = line;
    while (p < eol && is_blank(*p)) ++p;
    if (p == eol || *p == '#' || *p == '%') return std::nullopt;
    std::string_view fields[4];
    int n = 0;
    for (; n < 4; ++n) {
      fields[n] = next_field(p, eol);
      if (fields[n].empty()) break;
    }
    std::string_view type, id_text, label_text;
    if (n == 3) {
      type = fields[0], id_text = fields[1], label_text = fields[2];
    } else if (n == 2) {
      // `<type><id>`: the id is the trailing digits.
      const std::string_view node = fields[0];
      std::size_t split = node.size();
      while (split > 0 && node[split - 1] >= '0' && node[split - 1] <= '9') --split;
      type = node.substr(0, split), id_text = node.substr(split), label_text = fields[1];
    } else {
      return concat("expected '<type><id> <class>' or '<type> <id> <class>', got ", quote_line(text, line - begin));
    }
    int64_t id = 0, label = 0;
    if (!is_valid_type_name(type) || !parse_id(id_text, id) || !parse_id(label_text, label) ||
        label > std::numeric_limits<int32_t>::max()) {
      return concat("expected '<type><id> <class>' or '<type> <id> <class>' (a type name, then non-negative ",
                    "integers; classes below 2^31), got ", quote_line(text, line - begin));
    }
    if (const auto it = edges.type_ids.find(type); it != edges.type_ids.end()) {
      const int64_t count = edges.type_count[static_cast<std::size_t>(it->second)];
      if (id >= count) {
        return concat("node ", type, id, " is in no edge of ", edges_path, " (type ", type, " has ids 0 to ",
                      count - 1, " there): labelling it would add nodes to ", type, " and shift the ids of the types ",
                      "after it; label only nodes that have an edge");
      }
    }
    out.type.emplace_back(type);
    out.id.push_back(id);
    out.label.push_back(static_cast<int32_t>(label));
    return std::nullopt;
  });
}

/// Whether the edges of relation `b` are exactly those of `a` reversed.
bool reverses(const std::vector<std::pair<int64_t, int64_t>>& a, const std::vector<std::pair<int64_t, int64_t>>& b_reversed) {
  return a == b_reversed;
}

/// reverse[r] for every relation, from the edges (see TypedEdgeListInput).
std::vector<int32_t> find_reverses(const TypedEdges& g, const std::vector<int64_t>& offset, bool keep_self_loops) {
  const std::size_t num_relations = g.relations.size();
  // Each relation's edges (global src, dst), sorted, and the same reversed, sorted.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> edges(num_relations), reversed(num_relations);
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    const RelationTypes t = g.relation_types[g.rel[e]];
    const int64_t s = offset[static_cast<std::size_t>(t.src_type)] + g.src[e];
    const int64_t d = offset[static_cast<std::size_t>(t.dst_type)] + g.dst[e];
    if (s == d && !keep_self_loops) continue;  // as the CSC: only the edges stored count
    edges[g.rel[e]].emplace_back(s, d);
    reversed[g.rel[e]].emplace_back(d, s);
  }
  for (std::size_t r = 0; r < num_relations; ++r) {
    for (auto* list : {&edges[r], &reversed[r]}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
  }
  std::vector<int32_t> reverse(num_relations, -1);
  for (std::size_t r = 0; r < num_relations; ++r) {
    int matches = 0;
    for (std::size_t q = 0; q < num_relations; ++q) {
      if (g.relation_types[q].src_type != g.relation_types[r].dst_type ||
          g.relation_types[q].dst_type != g.relation_types[r].src_type || !reverses(edges[r], reversed[q])) {
        continue;
      }
      ++matches;
      reverse[r] = static_cast<int32_t>(q);
    }
    if (matches > 1) {
      log_warn("relation ", g.relations[r].name(), " has ", matches, " relations with its edges reversed; none is "
               "recorded as its reverse");
      reverse[r] = -1;
    }
  }
  for (std::size_t r = 0; r < num_relations; ++r) {  // keep the map symmetric (the format requires it)
    if (reverse[r] >= 0 && reverse[static_cast<std::size_t>(reverse[r])] != static_cast<int32_t>(r)) reverse[r] = -1;
  }
  return reverse;
}

/// Adds `dst:rev_<rel>:src` for every relation r without a reverse (reverse[r] < 0), with r's
/// edges reversed, and records the pair in `reverse`, as PyG's ToUndirected does: a relational
/// model then reaches every type from its neighbours (a labelled type no relation enters learns
/// nothing from the graph). Returns the added relations' names. Throws FormatError naming `path`
/// when a reverse's name is taken or too long, or the relations would be too many.
std::vector<std::string> add_missing_reverses(TypedEdges& g, std::vector<int32_t>& reverse, const std::string& path) {
  const std::size_t num_read = g.relations.size();
  std::vector<int32_t> added_as(num_read, -1);
  std::vector<std::string> added;
  for (std::size_t r = 0; r < num_read; ++r) {
    if (reverse[r] >= 0) continue;
    const EdgeType& forward = g.relations[r];
    const EdgeType back{forward.dst, std::string(detail::kReversePrefix) + forward.rel, forward.src};
    const bool taken = std::any_of(g.relations.begin(), g.relations.end(),
                                   [&](const EdgeType& t) { return t.name() == back.name(); });
    if (taken || back.rel.size() > 64 || g.relations.size() == kMaxRelations) {
      const std::string why = taken                   ? "the name is taken"
                              : back.rel.size() > 64 ? "its name is longer than 64 characters"
                                                     : concat("more than ", kMaxRelations, " relations");
      throw FormatError(path, concat("relation ", forward.name(), " has no reverse, and ", back.name(),
                                     " cannot be added: ", why, " (--no-reverses leaves it without one)"));
    }
    added_as[r] = static_cast<int32_t>(g.relations.size());
    reverse[r] = added_as[r];
    reverse.push_back(static_cast<int32_t>(r));
    g.relations.push_back(back);
    g.relation_types.push_back({g.relation_types[r].dst_type, g.relation_types[r].src_type});
    added.push_back(back.name());
  }
  const std::size_t num_edges = g.src.size();
  for (std::size_t e = 0; e < num_edges; ++e) {
    if (const int32_t q = added_as[g.rel[e]]; q >= 0) {
      g.src.push_back(g.dst[e]);
      g.dst.push_back(g.src[e]);
      g.rel.push_back(static_cast<uint8_t>(q));
    }
  }
  return added;
}

/// Whether some relation ends at node type `type`.
bool has_incoming_relation(const TypedEdges& g, int32_t type) {
  return std::any_of(g.relation_types.begin(), g.relation_types.end(),
                     [&](const RelationTypes& t) { return t.dst_type == type; });
}

/// One relation's edges of the parsed file, as an edge input of write_typed_csc: `order` lists
/// the file's edges grouped by relation, and [begin, end) of it are this relation's.
class RelationEdges final : public detail::EdgeSource {
 public:
  RelationEdges(const TypedEdges& g, std::span<const int64_t> edges, std::string name)
      : g_(g), edges_(edges), name_(std::move(name)) {}

  void scan(ThreadPool&, Progress& progress,
            const std::function<void(std::span<const detail::EdgeChunk>)>& consume) const override {
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    std::vector<int64_t> src, dst;
    for (std::size_t begin = 0; begin < edges_.size(); begin += kBlock) {
      const std::size_t end = std::min(edges_.size(), begin + kBlock);
      src.clear();
      dst.clear();
      for (std::size_t i = begin; i < end; ++i) {
        src.push_back(g_.src[static_cast<std::size_t>(edges_[i])]);
        dst.push_back(g_.dst[static_cast<std::size_t>(edges_[i])]);
      }
      const detail::EdgeChunk chunk{src.data(), dst.data(), static_cast<int64_t>(src.size())};
      consume(std::span<const detail::EdgeChunk>(&chunk, 1));
      progress.add(static_cast<int64_t>(end - begin));
    }
  }
  int64_t progress_total() const override { return static_cast<int64_t>(edges_.size()); }
  std::string progress_unit() const override { return " edges"; }
  const std::string& name() const override { return name_; }

 private:
  const TypedEdges& g_;
  std::span<const int64_t> edges_;
  std::string name_;
};

/// Writes indptr, indices and type_per_edge with the shared typed CSC builder (write_typed_csc):
/// by column, then relation, then source, without duplicates (and self-loops unless kept).
detail::CscResult write_typed_topology(DatasetWriter& writer, const TypedEdges& g, const std::vector<int64_t>& offset,
                                       const std::string& path, bool keep_self_loops, ThreadPool& pool) {
  // The file's edges grouped by relation (a counting sort, stable).
  const std::size_t num_relations = g.relations.size();
  std::vector<int64_t> start(num_relations + 1, 0);
  for (const uint8_t r : g.rel) ++start[r + 1];
  for (std::size_t r = 0; r < num_relations; ++r) start[r + 1] += start[r];
  std::vector<int64_t> order(g.rel.size());
  std::vector<int64_t> cursor(start.begin(), start.end() - 1);
  for (std::size_t e = 0; e < g.rel.size(); ++e) order[static_cast<std::size_t>(cursor[g.rel[e]]++)] = static_cast<int64_t>(e);

  std::vector<RelationEdges> sources;
  sources.reserve(num_relations);
  std::vector<detail::TypedEdgeInput> inputs;
  for (std::size_t r = 0; r < num_relations; ++r) {
    sources.emplace_back(g, std::span<const int64_t>(order).subspan(static_cast<std::size_t>(start[r]),
                                                                    static_cast<std::size_t>(start[r + 1] - start[r])),
                         path);
    const RelationTypes t = g.relation_types[r];
    detail::TypedEdgeInput in;
    in.edges = &sources.back();
    in.relation = static_cast<int>(r);
    in.src_type = g.types[static_cast<std::size_t>(t.src_type)];
    in.dst_type = g.types[static_cast<std::size_t>(t.dst_type)];
    in.src_offset = offset[static_cast<std::size_t>(t.src_type)];
    in.src_count = offset[static_cast<std::size_t>(t.src_type) + 1] - in.src_offset;
    in.dst_offset = offset[static_cast<std::size_t>(t.dst_type)];
    in.dst_count = offset[static_cast<std::size_t>(t.dst_type) + 1] - in.dst_offset;
    inputs.push_back(in);
  }
  return detail::write_typed_csc(writer, inputs, offset.back(), keep_self_loops, /*memory_budget=*/0, pool);
}

/// The labelled nodes in a seeded random order (Philox keys, so the order depends on the seed and
/// the ids only), cut into train, valid and test.
void write_split(detail::ConvertSession& session, std::vector<int64_t> labelled, const TypedEdgeListInput& input) {
  std::vector<uint64_t> key(labelled.size());
  for (std::size_t i = 0; i < labelled.size(); ++i) key[i] = philox_u64(input.seed, 0, static_cast<uint64_t>(labelled[i]));
  std::vector<std::size_t> order(labelled.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return key[a] != key[b] ? key[a] < key[b] : labelled[a] < labelled[b];
  });
  const auto count = static_cast<double>(labelled.size());
  const auto train = static_cast<std::size_t>(std::floor(input.train_fraction * count));
  const auto valid = std::min(labelled.size() - train, static_cast<std::size_t>(std::floor(input.valid_fraction * count)));
  const std::size_t bounds[4] = {0, train, train + valid, labelled.size()};
  const Split splits[3] = {Split::kTrain, Split::kValid, Split::kTest};
  for (int s = 0; s < 3; ++s) {
    std::vector<int64_t> ids;
    for (std::size_t i = bounds[s]; i < bounds[s + 1]; ++i) ids.push_back(labelled[order[i]]);
    std::sort(ids.begin(), ids.end());
    session.split(splits[s], ids, concat("the ", split_name(splits[s]), " split of ", input.labels));
  }
}

}  // namespace

ConvertReport convert_typed_edge_list(const TypedEdgeListInput& input, const std::string& out,
                                      const ConvertOptions& options, ThreadPool& pool) {
  GRAPHTIER_EXPECTS(!options.symmetrize, InvalidArgument,
                    "--symmetrize is not for typed edge lists: list each reverse relation in the input");
  GRAPHTIER_EXPECTS(!options.num_nodes, InvalidArgument,
                    "--num-nodes is not for typed edge lists: each type's count is its largest id + 1");
  GRAPHTIER_EXPECTS(options.memory_budget == 0, InvalidArgument,
                    "--memory-budget is not supported for typed edge lists (their edges are held in memory)");
  GRAPHTIER_EXPECTS(input.train_fraction >= 0 && input.valid_fraction >= 0 &&
                        input.train_fraction + input.valid_fraction <= 1,
                    InvalidArgument, "split fractions must be >= 0 and add up to at most 1, got train ",
                    input.train_fraction, " and valid ", input.valid_fraction);
  const detail::SourcePtr source = detail::text_source(input.path);
  detail::ConvertSession session(out, options, detail::is_gzip_file(input.path) ? "typed edge list (gzip)" : "typed edge list",
                                 pool);
  const auto start = std::chrono::steady_clock::now();
  TypedEdges g = read_typed_edges(*source, pool);
  if (g.weighted) log_warn(input.path, ": edge weights other than 1 were read; the dataset does not store weights");

  LabelLines labels;
  if (!input.labels.empty()) {
    const detail::SourcePtr label_source = detail::text_source(input.labels);
    detail::parse_lines<LabelLines>(
        *label_source, pool, nullptr,
        [&](std::string_view text, LabelLines& o) { return parse_label_lines(text, g, input.path, o); },
        [&](std::vector<LabelLines>& parts, const detail::TextBlock&) {
          for (LabelLines& part : parts) {
            labels.type.insert(labels.type.end(), part.type.begin(), part.type.end());
            labels.id.insert(labels.id.end(), part.id.begin(), part.id.end());
            labels.label.insert(labels.label.end(), part.label.begin(), part.label.end());
          }
        });
    if (labels.id.empty()) throw FormatError(input.labels, "has no labels");
    for (std::size_t i = 0; i < labels.id.size(); ++i) {
      if (labels.type[i] != labels.type[0]) {
        throw FormatError(input.labels, concat("labels nodes of types ", labels.type[0], " and ", labels.type[i],
                                               "; one type is labelled"));
      }
    }
    if (g.type_ids.count(labels.type[0]) == 0) {
      throw FormatError(input.labels, concat("labels nodes of type ", labels.type[0], ", which no edge of ", input.path,
                                             " has (types: ", [&] {
                                               std::string names;
                                               for (const auto& t : g.types) names += (names.empty() ? "" : ", ") + t;
                                               return names;
                                             }(), ")"));
    }
  }

  std::vector<int64_t> offset{0};
  for (const int64_t count : g.type_count) {
    offset.push_back(offset.back() + count);
    if (const std::string problem = node_count_problem(offset.back(), 24, "the edges and their counters");
        !problem.empty()) {
      throw FormatError(input.path, problem);
    }
  }
  std::vector<int32_t> reverse = find_reverses(g, offset, options.keep_self_loops);
  const std::size_t edges_read = g.src.size();
  const std::vector<std::string> added = input.add_reverses ? add_missing_reverses(g, reverse, input.path)
                                                            : std::vector<std::string>{};
  if (!labels.id.empty()) {
    const int32_t type = g.type_ids.at(labels.type[0]);
    if (!has_incoming_relation(g, type)) {
      log_warn(input.path, ": no relation ends at the labelled type ", labels.type[0], ", so a relational model ",
               "learns nothing from its neighbours (graphtier train refuses it); convert without --no-reverses to ",
               "add each relation's reverse");
    }
  }
  session.topology_written(write_typed_topology(session.writer(), g, offset, input.path, options.keep_self_loops, pool),
                           seconds_since(start));

  HeteroSchema& schema = session.manifest().hetero;
  for (const std::string& t : g.types) schema.node_types.push_back({t, {}});
  schema.node_type_offset = offset;
  for (std::size_t r = 0; r < g.relations.size(); ++r) {
    schema.relations.push_back({g.relations[r].rel, g.relation_types[r], reverse[r]});
  }

  if (!labels.id.empty()) {
    const int32_t type = g.type_ids.at(labels.type[0]);
    schema.labelled_type = type;
    std::vector<int32_t> node_labels(static_cast<std::size_t>(offset.back()), -1);
    std::vector<int64_t> labelled;
    for (std::size_t i = 0; i < labels.id.size(); ++i) {
      const int64_t v = offset[static_cast<std::size_t>(type)] + labels.id[i];
      if (node_labels[static_cast<std::size_t>(v)] != -1) {
        throw FormatError(input.labels, concat("node ", labels.type[i], labels.id[i], " is labelled twice"));
      }
      node_labels[static_cast<std::size_t>(v)] = labels.label[i];
      labelled.push_back(v);
    }
    session.labels(node_labels, input.labels);
    std::sort(labelled.begin(), labelled.end());
    write_split(session, std::move(labelled), input);
  }
  ConvertReport report = session.commit(concat("graphtier convert typed-edge-list ", input.path,
                                               input.labels.empty() ? std::string()
                                                                    : concat(" --labels ", input.labels, " --split ",
                                                                             input.train_fraction, ",", input.valid_fraction,
                                                                             " --seed ", input.seed),
                                               input.add_reverses ? "" : " --no-reverses",
                                               options.keep_self_loops ? " (self-loops kept)" : ""));
  report.input_edges -= static_cast<int64_t>(g.src.size() - edges_read);  // the added reverses were not read
  report.added_reverses = added;
  report.num_node_types = static_cast<int64_t>(g.types.size());
  report.num_relations = static_cast<int64_t>(g.relations.size());
  return report;
}

}  // namespace graphtier::graph

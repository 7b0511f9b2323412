// Neighbour rows and owner draws as they cross between ranks (docs/architecture.md, Scale-out):
// the distributed sampler's replies, packed. A row or a set of picks is a list of node ids and CSC
// positions; as int64 each costs 8 bytes, while most of their information is small: degrees and
// counts, a position's distance from the last one sent, a neighbour's distance from the last
// neighbour (rows are sorted by the converters) or, after hotness renumbering, a small id. So each
// value crosses as a LEB128 varint (7 bits a byte) of its delta, zigzag-coded when it may be
// negative, and each row or request picks the cheaper of two codings of its neighbour ids.
//
// The requester knows what it asked for (the nodes, so their count), so a message holds neither.
// A message is self-contained (its deltas start from 0), and the unpacked values equal the packed
// ones exactly, so the draws made on unpacked rows stay bit-identical to the single-process
// samplers'. Unpacking checks every byte: a message that is cut short, runs on past its last
// record, holds an overlong varint or a value outside int64's non-negative range is refused with
// InvalidArgument naming the problem and its byte offset.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/sample/row_sampling.hpp"

namespace graphtier::sample {

/// Ids message (a request: the rows or the frontier nodes asked of an owner): varint(2 count +
/// coding), then the ids coded as a row's neighbours (below). Throws InvalidArgument for a
/// negative id.
std::vector<uint8_t> pack_ids(std::span<const int64_t> ids);

/// The ids of a pack_ids message.
std::vector<int64_t> unpack_ids(std::span<const uint8_t> message);

/// Rows message: varint(the rows' neighbour ids in all: the requester sizes its arrays once), then
/// per row in order: varint(2 degree + coding), zigzag varint of its first edge's distance from the
/// previous row's end (first_edge + degree; 0 before the first row), then its degree neighbour
/// ids: coding 0, zigzag varints of each id's distance from the previous one in the row (from 0 at
/// the row's start); coding 1, each id as a plain varint. `rows.nodes` is not packed. Throws
/// InvalidArgument for rows whose shapes disagree or a negative id or position.
std::vector<uint8_t> pack_rows(const NeighborRows& rows);

/// The rows of `nodes` (the requester's ids, in the order asked) from a pack_rows message.
NeighborRows unpack_rows(std::span<const uint8_t> message, std::span<const int64_t> nodes);

/// Draws message: varint(the picks in all), then per request in order: varint(2 count + coding),
/// the count neighbour ids coded as a row's (coding 0 or 1), then the count edge ids as zigzag
/// varints of each one's distance from the previous edge id of the message (from 0). Throws as
/// pack_rows.
std::vector<uint8_t> pack_draws(const RowDraws& draws);

/// The draws of `requests` requests from a pack_draws message.
RowDraws unpack_draws(std::span<const uint8_t> message, int64_t requests);

}  // namespace graphtier::sample

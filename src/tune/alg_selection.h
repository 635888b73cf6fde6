// A collective call's algorithm selection (ncclCollConfig_t::algSelection, NCCL 2.31): an
// expression over algorithm names that says which of them the call may use.
//
// The names are NCCL's (RING_SIMPLE, TREE_LL, NVLS_SIMPLE, SYMK_..., and braid's ONESHOT); each
// word of the expression selects every name it begins (case-insensitive: "ring" is RING_LL,
// RING_LL128 and RING_SIMPLE). '^' before a word selects every name it does not begin, '+' keeps
// what both sides select and ',' what either does; '+' binds tighter than ','. Parentheses are
// not part of the grammar. What is left is read as braid's (algorithm, protocol) pairs
// (tune::pairBit): the names braid does not implement (LL128, NVLS, CollNet, PAT, the symmetric
// kernels) select nothing of braid's.
#pragma once

#include <cstdint>
#include <string>

#include "braid/status.h"

namespace braid::tune {

/// The pairs `text` selects; 0 for an empty text (no selection: the communicator chooses).
/// Errors (invalidArgument) say why: a word no name begins, an operator without a word beside
/// it, or an expression that selects nothing braid implements (naming what it did select).
Result<uint32_t> parseAlgSelection(const std::string& text);

}  // namespace braid::tune

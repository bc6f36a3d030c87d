#pragma once
#include <cstdint>

namespace pdsp {

// Positions inside one slice (rows, slots, variables, states, table entries) are 32-bit: they
// are the bulk of a slice's index memory, and halving them is what lets 50 million variables
// fit one machine. A slice may therefore hold at most 2^31 - 1 of each; the file's global
// positions stay 64-bit, and larger problems run on more ranks.
using LocalIndex = int32_t;

}  // namespace pdsp

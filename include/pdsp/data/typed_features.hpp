#pragma once
// The compact features of a data set (format 2, docs/file-format.md): sparse observation rows
// that variables and factors read, and typed parameter blocks indexed by a region's state and an
// observation position. A region r (a variable with states t < card, or a factor with joint
// states t < table size) of type k that reads observation row x adds
//   dim[k] > 0:  u_r(t) += sum over entries (j, x_j) of theta[param_offset[k] + t * dim[k] + j] *
//   x_j dim[k] = 0:  u_r(t) += theta[param_offset[k] + t]
// to the potential its feature rows give. One observation vector per letter then replaces 26
// rows of the same pixels, and one table offset replaces a row per joint state.
#include <cstdint>
#include <vector>

#include "pdsp/data/local_index.hpp"
#include "pdsp/data/row_pointers.hpp"

namespace pdsp {

// Observation rows of one slice: row i holds (index[k], value[k]) for k in [ptr[i], ptr[i+1]).
struct ObservationRows {
  RowPointers ptr{0};
  std::vector<int32_t> index;  // position j inside the observation vector
  std::vector<double> value;   // empty when the file stores none: every value is 1
  int64_t first_row = 0;       // global position of the slice's first row in /obs/ptr
  int64_t first_nnz = 0;       // global position of its first entry

  int64_t num_rows() const { return static_cast<int64_t>(ptr.size()) - 1; }
  int64_t nnz() const { return static_cast<int64_t>(index.size()); }
  double value_at(int64_t k) const { return value.empty() ? 1.0 : value[k]; }
};

// The typed part of one region kind (variables or factors).
struct RegionTypes {
  bool present = false;               // the file has the kind's type arrays
  std::vector<int64_t> param_offset;  // [types] first parameter of each type's block
  std::vector<int32_t> dim;           // [types] observation dimension (0: a shared table)
  std::vector<int32_t> type;          // [regions of the slice] a type, or -1 for none
  std::vector<LocalIndex> obs_row;    // [regions] local observation row, or -1; empty when no
                                      // type has dim > 0

  int64_t num_types() const { return static_cast<int64_t>(dim.size()); }
  // The parameters a region of type k with `size` states spans: [param_offset[k], + this).
  int64_t block_size(int64_t k, int64_t size) const { return size * (dim[k] > 0 ? dim[k] : 1); }
};

}  // namespace pdsp

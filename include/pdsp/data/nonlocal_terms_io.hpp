#pragma once
// Reading, checking and writing the non-local terms of a data set (nonlocal_terms.hpp; the
// layout is docs/file-format.md "Non-local terms"). The data-set reader calls these, so every
// rule of that part lives in one file.
#include <cstdint>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/nonlocal_terms.hpp"

namespace pdsp {

// The terms of the whole file, read and checked on every rank (they are small: templates, one
// template id per instance, the dictionary); num_states 0 when the file has none.
NonlocalTerms scan_nonlocal_terms(const h5::File& file, int64_t num_examples);

// The terms of examples [first, last) of a scanned file into `data` (its structure read): the
// templates and the dictionary whole, the slice's instances. Checks that every variable under a
// term has the terms' number of states.
void select_nonlocal_terms(const NonlocalTerms& file_terms, int64_t first, int64_t last,
                           Dataset& data);

// Writes `data`'s terms (nothing when it has none).
void write_nonlocal_terms(h5::File& file, const Dataset& data);

}  // namespace pdsp

#include "pdsp/data/nonlocal_terms_io.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "pdsp/data/reader_checks.hpp"

namespace pdsp {
namespace {

constexpr const char* kCountArrays[] = {"/nonlocal/count_a", "/nonlocal/count_b",
                                        "/nonlocal/count_shape", "/nonlocal/count_template",
                                        "/examples/count_offset"};
constexpr const char* kWordArrays[] = {"/nonlocal/word_ptr", "/nonlocal/word_state"};

// The arrays of one part come together: all of `names` or none.
bool part_present(const h5::File& file, std::span<const char* const> names) {
  int present = 0;
  for (const char* name : names) present += file.exists(name) ? 1 : 0;
  if (present == 0) return false;
  const char* there = *std::find_if(names.begin(), names.end(),
                                    [&](const char* name) { return file.exists(name); });
  for (const char* name : names)
    if (!file.exists(name))
      throw_file_error(file.path(), name,
                       std::string("is missing, but ") + there + " of the same part is there");
  return true;
}

void require_length(const h5::File& file, const std::string& name, int64_t expected,
                    const std::string& what) {
  if (file.length(name) != expected)
    throw_file_error(file.path(), name,
                     "has " + std::to_string(file.length(name)) + " values, expected " +
                         std::to_string(expected) + " (" + what + ")");
}

// The whole of `name`, each value an index in [0, count) of a `what`.
std::vector<int32_t> read_indices(const h5::File& file, const std::string& name, int64_t count,
                                  const std::string& what) {
  std::vector<int32_t> values = file.read_all<int32_t>(name);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < 0 || values[i] >= count)
      throw_file_error(file.path(), name, static_cast<int64_t>(i),
                       std::to_string(values[i]) + " is not a " + what + " (0.." +
                           std::to_string(count - 1) + ")");
  return values;
}

void read_dictionary_kinds(const h5::File& file, NonlocalTerms& terms) {
  if (!file.has_attribute("nonlocal_dictionary")) return;
  const std::string kinds = file.read_string_attribute("nonlocal_dictionary");
  size_t start = 0;
  while (start <= kinds.size() && !kinds.empty()) {
    const size_t comma = kinds.find(',', start);
    const std::string kind =
        kinds.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool* named = kind == "unigram"    ? &terms.unigram
                  : kind == "position" ? &terms.position
                                       : nullptr;
    if (named == nullptr)
      throw_file_error(file.path(), "@nonlocal_dictionary",
                       "'" + kind + "' is not a dictionary term (unigram, position)");
    if (*named) throw_file_error(file.path(), "@nonlocal_dictionary", "names '" + kind + "' twice");
    *named = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if ((terms.unigram || terms.position) && terms.num_words() == 0)
    throw_file_error(file.path(), "@nonlocal_dictionary",
                     "names dictionary terms, but /nonlocal/word_ptr holds no word");
}

}  // namespace

NonlocalTerms scan_nonlocal_terms(const h5::File& file, int64_t num_examples) {
  const std::string& path = file.path();
  NonlocalTerms terms;
  const bool counts = part_present(file, kCountArrays);
  const bool words = part_present(file, kWordArrays);
  if (!counts && !words) {
    if (file.has_attribute("nonlocal_states") || file.has_attribute("nonlocal_dictionary"))
      throw_file_error(path, "/nonlocal", "is missing, but the file has @nonlocal_states");
    return terms;
  }
  const int64_t states = file.read_int_attribute("nonlocal_states");
  if (states < 1 || states > INT32_MAX)
    throw_file_error(path, "@nonlocal_states",
                     "must be in [1, 2^31), got " + std::to_string(states));
  terms.num_states = static_cast<int32_t>(states);

  if (counts) {
    terms.count_b = read_finite(file, "/nonlocal/count_b", 0, file.length("/nonlocal/count_b"));
    const int64_t templates = terms.num_templates();
    require_length(
        file, "/nonlocal/count_a", templates * states,
        std::to_string(templates) + " templates x " + std::to_string(states) + " states");
    terms.count_a = read_finite(file, "/nonlocal/count_a", 0, templates * states);
    require_length(file, "/nonlocal/count_shape", templates,
                   "one per template of /nonlocal/count_b");
    const std::vector<int32_t> shapes = file.read_all<int32_t>("/nonlocal/count_shape");
    for (int64_t j = 0; j < templates; ++j) {
      if (shapes[j] < 0 || shapes[j] > 2)
        throw_file_error(path, "/nonlocal/count_shape", j,
                         std::to_string(shapes[j]) +
                             " is not a loss shape (0 smoothed hinge, 1 squared, 2 linear)");
      terms.count_shape.push_back(static_cast<CountShape>(shapes[j]));
    }
    require_length(file, "/examples/count_offset", num_examples + 1, "examples + 1");
    terms.count_offset = file.read_all<int64_t>("/examples/count_offset");
    check_offsets(path, "/examples/count_offset", terms.count_offset, false,
                  file.length("/nonlocal/count_template"));
    terms.count_template = read_indices(file, "/nonlocal/count_template", templates, "template");
  } else {
    terms.count_offset.assign(static_cast<size_t>(num_examples) + 1, 0);
  }

  if (words) {
    terms.word_ptr = file.read_all<int64_t>("/nonlocal/word_ptr");
    check_offsets(path, "/nonlocal/word_ptr", terms.word_ptr, true,
                  file.length("/nonlocal/word_state"));
    terms.word_state = read_indices(file, "/nonlocal/word_state", states, "state");
  }
  read_dictionary_kinds(file, terms);
  return terms;
}

void select_nonlocal_terms(const NonlocalTerms& file_terms, int64_t first, int64_t last,
                           Dataset& data) {
  if (file_terms.num_states == 0) return;
  NonlocalTerms& terms = data.nonlocal;
  terms = file_terms;
  const auto begin = file_terms.count_template.begin();
  terms.count_template.assign(begin + file_terms.count_offset[first],
                              begin + file_terms.count_offset[last]);
  terms.count_offset.resize(static_cast<size_t>(last - first + 1));
  for (int64_t n = first; n <= last; ++n)
    terms.count_offset[n - first] = file_terms.count_offset[n] - file_terms.count_offset[first];
  const bool dictionary = terms.unigram || terms.position;
  for (int64_t n = 0; n < last - first; ++n) {
    if (!dictionary && terms.count_offset[n + 1] == terms.count_offset[n]) continue;
    for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v)
      if (data.card[v] != terms.num_states)
        throw_file_error(data.source(), "/vars/card", data.file_var(v),
                         std::to_string(data.card[v]) +
                             " states, but the non-local terms of "
                             "example " +
                             std::to_string(first + n) + " count " +
                             std::to_string(terms.num_states) + " (@nonlocal_states)");
  }
}

void write_nonlocal_terms(h5::File& file, const Dataset& data) {
  const NonlocalTerms& terms = data.nonlocal;
  if (terms.num_states == 0) return;
  file.write_attribute("nonlocal_states", int64_t{terms.num_states});
  if (terms.num_templates() > 0 || !terms.count_template.empty()) {
    file.write("/nonlocal/count_a", terms.count_a);
    file.write("/nonlocal/count_b", terms.count_b);
    std::vector<int32_t> shapes;
    for (const CountShape shape : terms.count_shape) shapes.push_back(static_cast<int32_t>(shape));
    file.write("/nonlocal/count_shape", shapes);
    file.write("/nonlocal/count_template", terms.count_template);
    file.write("/examples/count_offset", terms.count_offset);
  }
  if (terms.num_words() > 0) {
    file.write("/nonlocal/word_ptr", terms.word_ptr);
    file.write("/nonlocal/word_state", terms.word_state);
  }
  if (terms.unigram || terms.position)
    file.write_attribute("nonlocal_dictionary",
                         std::string(terms.unigram && terms.position ? "unigram,position"
                                     : terms.unigram                 ? "unigram"
                                                                     : "position"));
}

}  // namespace pdsp

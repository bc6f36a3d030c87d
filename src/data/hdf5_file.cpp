#include "pdsp/data/hdf5_file.hpp"

#include <climits>
#include <cstdint>
#include <filesystem>
#include <type_traits>

#include "pdsp/data/allocation.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp::h5 {
namespace {

// HDF5 prints its own error stack by default; pdsp reports one line of its own instead.
void silence_hdf5_errors() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

// Whether the error stack of the last failed call holds HDF5's "unable to lock file": since
// HDF5 1.10 a file another process has open for writing cannot be opened, and without this it
// looks like a damaged file.
bool failed_on_file_lock() {
  bool locked = false;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* error, void* found) -> herr_t {
        if (error->min_num == H5E_CANTLOCKFILE) *static_cast<bool*>(found) = true;
        return 0;
      },
      &locked);
  return locked;
}

[[noreturn]] void throw_open_error(const std::string& path, const std::string& otherwise) {
  if (failed_on_file_lock())
    throw InputError(path +
                     ": locked by another process (HDF5 file locking); close it, or set "
                     "HDF5_USE_FILE_LOCKING=FALSE on file systems without locks");
  throw InputError(path + ": " + otherwise);
}

// A chunked dataset whose chunks were never written reads as fill values, so a few bytes of
// file can claim any length. Before a large read every chunk must be there.
void require_written(hid_t dataset, const std::string& path, const std::string& name) {
  const Handle properties(H5Dget_create_plist(dataset), H5Pclose);
  if (H5Pget_layout(properties.get()) != H5D_CHUNKED) return;
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  if (H5Dget_space_status(dataset, &status) < 0 || status != H5D_SPACE_STATUS_ALLOCATED)
    throw_file_error(path, name,
                     "some of its chunks were never written (a damaged or unfinished file)");
}

template <class T>
hid_t memory_type() {
  if constexpr (std::is_same_v<T, int32_t>) return H5T_NATIVE_INT32;
  if constexpr (std::is_same_v<T, int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, uint8_t>) return H5T_NATIVE_UINT8;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
}

// Integers must be stored as integers and reals as reals: HDF5 would silently convert between
// the two classes, which hides a writer's mistake.
template <class T>
H5T_class_t expected_class() {
  return std::is_floating_point_v<T> ? H5T_FLOAT : H5T_INTEGER;
}

}  // namespace

std::string library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = -1;
}

File File::open_read(const std::string& path) {
  silence_hdf5_errors();
  if (!std::filesystem::exists(path)) throw InputError(path + ": file not found");
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw_open_error(path, "not a readable HDF5 file");
  return File(Handle(id, H5Fclose), path);
}

File File::open_write(const std::string& path) {
  silence_hdf5_errors();
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (id < 0) throw_open_error(path, "cannot open HDF5 file for writing");
  return File(Handle(id, H5Fclose), path);
}

File File::create(const std::string& path) {
  silence_hdf5_errors();
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) throw InputError(path + ": cannot create HDF5 file");
  return File(Handle(id, H5Fclose), path);
}

bool File::exists(const std::string& name) const {
  // H5Lexists needs every intermediate group to exist, so walk the path one link at a time.
  size_t pos = 0;
  while (true) {
    pos = name.find('/', pos + 1);
    std::string prefix = name.substr(0, pos);
    if (H5Lexists(handle_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (pos == std::string::npos) return true;
  }
}

Handle File::open_dataset(const std::string& name) const {
  if (!exists(name)) throw_file_error(path_, name, "required dataset is missing");
  hid_t id = H5Dopen2(handle_.get(), name.c_str(), H5P_DEFAULT);
  if (id < 0) throw_file_error(path_, name, "cannot open dataset");
  return Handle(id, H5Dclose);
}

int64_t File::length(const std::string& name) const {
  Handle dataset = open_dataset(name);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != 1)
    throw_file_error(path_, name, "expected a 1-D dataset");
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return static_cast<int64_t>(dims[0]);
}

template <class T>
std::vector<T> File::read(const std::string& name, int64_t offset, int64_t count) const {
  Handle dataset = open_dataset(name);
  Handle file_type(H5Dget_type(dataset.get()), H5Tclose);
  if (H5Tget_class(file_type.get()) != expected_class<T>())
    throw_file_error(path_, name,
                     std::is_floating_point_v<T> ? "expected a floating-point dataset"
                                                 : "expected an integer dataset");
  Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(file_space.get()) != 1)
    throw_file_error(path_, name, "expected a 1-D dataset");
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(file_space.get(), dims, nullptr);
  if (offset < 0 || count < 0 || static_cast<hsize_t>(offset + count) > dims[0])
    throw_file_error(path_, name, offset + count - 1,
                     "index past the end of the dataset (length " + std::to_string(dims[0]) + ")");
  if (static_cast<double>(count) * sizeof(T) >= kLargeAllocationBytes)
    require_written(dataset.get(), path_, name);
  std::vector<T> out =
      allocate_vector<T>(path_ + ": " + name, std::to_string(count) + " values", count);
  if (count == 0) return out;
  // HDF5 clamps an integer that does not fit the memory type; read wide integers wide and
  // refuse what a 32-bit field cannot hold.
  if constexpr (std::is_same_v<T, int32_t>) {
    if (H5Tget_size(file_type.get()) > 4 ||
        (H5Tget_size(file_type.get()) == 4 && H5Tget_sign(file_type.get()) == H5T_SGN_NONE)) {
      const std::vector<int64_t> wide = read<int64_t>(name, offset, count);
      for (int64_t i = 0; i < count; ++i) {
        if (wide[i] < INT32_MIN || wide[i] > INT32_MAX)
          throw_file_error(path_, name, offset + i,
                           "value " + std::to_string(wide[i]) + " does not fit in 32 bits");
        out[i] = static_cast<int32_t>(wide[i]);
      }
      return out;
    }
  }
  hsize_t start[1] = {static_cast<hsize_t>(offset)};
  hsize_t size[1] = {static_cast<hsize_t>(count)};
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr);
  Handle memory_space(H5Screate_simple(1, size, nullptr), H5Sclose);
  if (H5Dread(dataset.get(), memory_type<T>(), memory_space.get(), file_space.get(), H5P_DEFAULT,
              out.data()) < 0)
    throw_file_error(path_, name, offset, "read failed (corrupt or truncated file?)");
  return out;
}

void File::ensure_parent_groups(const std::string& name) {
  size_t pos = 0;
  while ((pos = name.find('/', pos + 1)) != std::string::npos) {
    std::string group = name.substr(0, pos);
    if (H5Lexists(handle_.get(), group.c_str(), H5P_DEFAULT) > 0) continue;
    Handle created(H5Gcreate2(handle_.get(), group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose);
    if (created.get() < 0) throw_file_error(path_, group, "cannot create group");
  }
}

template <class T>
void File::create_dataset(const std::string& name, int64_t length) {
  ensure_parent_groups(name);
  hsize_t dims[1] = {static_cast<hsize_t>(length)};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle dataset(H5Dcreate2(handle_.get(), name.c_str(), memory_type<T>(), space.get(), H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
  if (dataset.get() < 0) throw_file_error(path_, name, "cannot create dataset");
}

template <class T>
void File::write_slice(const std::string& name, int64_t offset, std::span<const T> data) {
  if (data.empty()) return;
  Handle dataset = open_dataset(name);
  Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  hsize_t start[1] = {static_cast<hsize_t>(offset)};
  hsize_t size[1] = {data.size()};
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr);
  Handle memory_space(H5Screate_simple(1, size, nullptr), H5Sclose);
  if (H5Dwrite(dataset.get(), memory_type<T>(), memory_space.get(), file_space.get(), H5P_DEFAULT,
               data.data()) < 0)
    throw_file_error(path_, name, offset, "write failed");
}

bool File::has_attribute(const std::string& name) const {
  return H5Aexists(handle_.get(), name.c_str()) > 0;
}

Handle File::open_attribute(const std::string& name) const {
  if (!has_attribute(name)) throw_file_error(path_, "@" + name, "required attribute is missing");
  hid_t id = H5Aopen(handle_.get(), name.c_str(), H5P_DEFAULT);
  if (id < 0) throw_file_error(path_, "@" + name, "cannot open attribute");
  Handle attribute(id, H5Aclose);
  // Every reader below reads exactly one value; an array attribute would overrun it.
  Handle space(H5Aget_space(attribute.get()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw_file_error(path_, "@" + name, "expected a single value, not an array");
  return attribute;
}

std::string File::read_string_attribute(const std::string& name) const {
  Handle attribute = open_attribute(name);
  Handle type(H5Aget_type(attribute.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw_file_error(path_, "@" + name, "expected a string attribute");
  // Fixed-length and variable-length strings are both accepted: h5py writes either.
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Aread(attribute.get(), memory.get(), &text) < 0 || text == nullptr)
      throw_file_error(path_, "@" + name, "cannot read string attribute");
    std::string value(text);
    H5free_memory(text);
    return value;
  }
  const size_t size = H5Tget_size(type.get());
  std::string buffer(size, '\0');
  Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(memory.get(), size);
  H5Tset_strpad(memory.get(), H5T_STR_NULLPAD);
  H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
  if (H5Aread(attribute.get(), memory.get(), buffer.data()) < 0)
    throw_file_error(path_, "@" + name, "cannot read string attribute");
  return buffer.substr(0, buffer.find('\0'));
}

int64_t File::read_int_attribute(const std::string& name) const {
  Handle attribute = open_attribute(name);
  Handle type(H5Aget_type(attribute.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    throw_file_error(path_, "@" + name, "expected an integer attribute");
  int64_t value = 0;
  if (H5Aread(attribute.get(), H5T_NATIVE_INT64, &value) < 0)
    throw_file_error(path_, "@" + name, "cannot read attribute");
  return value;
}

double File::read_double_attribute(const std::string& name) const {
  Handle attribute = open_attribute(name);
  Handle type(H5Aget_type(attribute.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT && H5Tget_class(type.get()) != H5T_INTEGER)
    throw_file_error(path_, "@" + name, "expected a number attribute");
  double value = 0;
  if (H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw_file_error(path_, "@" + name, "cannot read attribute");
  return value;
}

namespace {
void write_scalar_attribute(hid_t object, const std::string& file, const std::string& name,
                            hid_t type, const void* value) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate2(object, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose);
  if (attribute.get() < 0 || H5Awrite(attribute.get(), type, value) < 0)
    throw_file_error(file, "@" + name, "cannot write attribute");
}
}  // namespace

void File::write_attribute(const std::string& name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.empty() ? 1 : value.size());
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  write_scalar_attribute(handle_.get(), path_, name, type.get(), value.c_str());
}

void File::write_attribute(const std::string& name, int64_t value) {
  write_scalar_attribute(handle_.get(), path_, name, H5T_NATIVE_INT64, &value);
}

void File::write_attribute(const std::string& name, double value) {
  write_scalar_attribute(handle_.get(), path_, name, H5T_NATIVE_DOUBLE, &value);
}

void File::flush() {
  H5Fflush(handle_.get(), H5F_SCOPE_GLOBAL);
}

template std::vector<int32_t> File::read<int32_t>(const std::string&, int64_t, int64_t) const;
template std::vector<int64_t> File::read<int64_t>(const std::string&, int64_t, int64_t) const;
template std::vector<double> File::read<double>(const std::string&, int64_t, int64_t) const;
template std::vector<uint8_t> File::read<uint8_t>(const std::string&, int64_t, int64_t) const;
template void File::create_dataset<int32_t>(const std::string&, int64_t);
template void File::create_dataset<int64_t>(const std::string&, int64_t);
template void File::create_dataset<double>(const std::string&, int64_t);
template void File::create_dataset<uint8_t>(const std::string&, int64_t);
template void File::write_slice<int32_t>(const std::string&, int64_t, std::span<const int32_t>);
template void File::write_slice<int64_t>(const std::string&, int64_t, std::span<const int64_t>);
template void File::write_slice<double>(const std::string&, int64_t, std::span<const double>);
template void File::write_slice<uint8_t>(const std::string&, int64_t, std::span<const uint8_t>);

}  // namespace pdsp::h5

#pragma once
// A thin RAII layer over the HDF5 C API: 1-D datasets read whole or as a slice, root attributes.
// Every failure becomes an InputError that names the file and the dataset.
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pdsp::h5 {

// The HDF5 library this build runs on, e.g. "1.10.8".
std::string library_version();

// Owns one HDF5 identifier and closes it with the matching H5*close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  void reset();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

class File {
 public:
  static File open_read(const std::string& path);
  static File open_write(const std::string& path);  // an existing file, for slice writes
  static File create(const std::string& path);      // truncates
  const std::string& path() const { return path_; }

  bool exists(const std::string& name) const;
  // Length of a 1-D dataset; an error when it is missing or not 1-D.
  int64_t length(const std::string& name) const;

  template <class T>
  std::vector<T> read(const std::string& name, int64_t offset, int64_t count) const;
  template <class T>
  std::vector<T> read_all(const std::string& name) const {
    return read<T>(name, 0, length(name));
  }

  // Creates a 1-D dataset (and its parent groups) of `length` elements.
  template <class T>
  void create_dataset(const std::string& name, int64_t length);
  template <class T>
  void write_slice(const std::string& name, int64_t offset, std::span<const T> data);
  template <class T>
  void write_slice(const std::string& name, int64_t offset, const std::vector<T>& data) {
    write_slice(name, offset, std::span<const T>(data));
  }
  template <class T>
  void write(const std::string& name, const std::vector<T>& data) {
    create_dataset<T>(name, static_cast<int64_t>(data.size()));
    write_slice(name, 0, data);
  }

  bool has_attribute(const std::string& name) const;
  std::string read_string_attribute(const std::string& name) const;
  int64_t read_int_attribute(const std::string& name) const;
  double read_double_attribute(const std::string& name) const;
  void write_attribute(const std::string& name, const std::string& value);
  void write_attribute(const std::string& name, int64_t value);
  void write_attribute(const std::string& name, double value);

  void flush();

 private:
  File(Handle handle, std::string path) : handle_(std::move(handle)), path_(std::move(path)) {}
  Handle open_dataset(const std::string& name) const;
  Handle open_attribute(const std::string& name) const;
  void ensure_parent_groups(const std::string& name);

  Handle handle_;
  std::string path_;
};

}  // namespace pdsp::h5

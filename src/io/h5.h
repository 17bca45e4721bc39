// A thin RAII layer over the HDF5 C API: files, groups, typed datasets and attributes.
// Every HDF5 call goes through FT_CHECK_H5, so a failure names the call, the file and the source line.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace ft::h5 {

// Returns value, or throws naming the HDF5 call and its error stack when value is negative.
template <typename T>
T check(T value, const char* call, const char* file, int line);

#define FT_CHECK_H5(call) ::ft::h5::check((call), #call, __FILE__, __LINE__)

// Owns one hid_t and closes it with the matching H5*close.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle();
  Handle(Handle&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t id() const { return id_; }
  operator hid_t() const { return id_; }
  // Closes now and throws when HDF5 reports a failure (e.g. a full disk while flushing a file);
  // the destructor closes silently, so writers call this before committing a file.
  void close();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

Handle create_file(const std::string& path);  // truncates
// A file held in memory only (core driver, no backing store); file_image() returns its bytes, which
// the caller writes with checked I/O (small files such as results, where a full disk must be an error).
Handle create_memory_file(const std::string& name);
std::string file_image(hid_t file);
Handle open_file(const std::string& path, bool writable = false);
Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
bool exists(hid_t parent, const std::string& path);

// Typed datasets. `chunk` (optional, same rank as dims) enables chunked storage with gzip level 1.
template <typename T>
void write(hid_t parent, const std::string& name, const T* data, const std::vector<hsize_t>& dims,
           const std::vector<hsize_t>& chunk = {});
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values);
std::vector<hsize_t> dims(hid_t parent, const std::string& name);
// The HDF5 class of a dataset's element type (H5T_INTEGER, H5T_FLOAT, ...) and its size in bytes.
std::pair<H5T_class_t, std::size_t> element_type(hid_t parent, const std::string& name);
// Reads rows [first, first+count) of the leading dimension into out (sized by the caller).
template <typename T>
void read_rows(hid_t parent, const std::string& name, hsize_t first, hsize_t count, T* out);
template <typename T>
std::vector<T> read_all(hid_t parent, const std::string& name);
std::vector<std::string> read_strings(hid_t parent, const std::string& name);

// Attributes on a file, group or dataset.
void set_attr(hid_t obj, const std::string& name, const std::string& value);
void set_attr(hid_t obj, const std::string& name, const char* value);
void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values);
void set_attr(hid_t obj, const std::string& name, std::int64_t value);
void set_attr(hid_t obj, const std::string& name, double value);
void set_attr(hid_t obj, const std::string& name, const std::vector<double>& values);
bool has_attr(hid_t obj, const std::string& name);
std::string attr_string(hid_t obj, const std::string& name);
std::vector<std::string> attr_strings(hid_t obj, const std::string& name);
std::int64_t attr_int(hid_t obj, const std::string& name);
double attr_double(hid_t obj, const std::string& name);
std::vector<double> attr_doubles(hid_t obj, const std::string& name);

}  // namespace ft::h5

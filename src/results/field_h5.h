// Writes and reads a FieldGroup through the io/h5 layer: attributes of one object, or one dataset
// per field (a table). Reading names the group and field in every error.
#pragma once

#include <type_traits>

#include "io/h5.h"
#include "results/field_table.h"
#include "runtime/error.h"

namespace ft::field_h5 {

// The element type a table column is stored as (int and bool as int32).
template <typename T>
using Stored = std::conditional_t<std::is_same_v<T, int> || std::is_same_v<T, bool>, std::int32_t, T>;

// Runs `read` and prefixes any error with "<group>/<field>: ".
template <typename Function>
void located(const char* group, const char* field, Function&& read) {
  try {
    read();
  } catch (const Error& e) {
    throw Error(cat(group, std::string(group) == "/" ? "" : "/", field, ": ", e.what()));
  }
}

template <typename Record>
void write_attributes(hid_t object, const FieldGroup<Record>& group, Record record) {
  for (const auto& f : group.fields) {
    std::visit([&](auto* value) {
      using T = std::remove_pointer_t<decltype(value)>;
      if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, double>)
        h5::set_attr(object, f.name, *value);
      else
        h5::set_attr(object, f.name, static_cast<std::int64_t>(*value));
    }, f.ref(record));
  }
}

template <typename Record>
void read_attributes(hid_t object, const FieldGroup<Record>& group, Record& record) {
  for (const auto& f : group.fields) {
    located(group.path, f.name, [&] {
      std::visit([&](auto* value) {
        using T = std::remove_pointer_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) *value = h5::attr_string(object, f.name);
        else if constexpr (std::is_same_v<T, double>) *value = h5::attr_double(object, f.name);
        else if constexpr (std::is_same_v<T, bool>) *value = h5::attr_int(object, f.name) != 0;
        else *value = static_cast<T>(h5::attr_int(object, f.name));
      }, f.ref(record));
    });
  }
}

template <typename Record>
void write_text_datasets(hid_t object, const FieldGroup<Record>& group, Record record) {
  for (const auto& f : group.fields) h5::write_strings(object, f.name, {*std::get<std::string*>(f.ref(record))});
}

template <typename Record>
void read_text_datasets(hid_t object, const FieldGroup<Record>& group, Record& record) {
  for (const auto& f : group.fields) {
    located(group.path, f.name, [&] {
      const auto values = h5::read_strings(object, f.name);
      FT_REQUIRE(values.size() == 1, "holds ", values.size(), " strings, not 1");
      *std::get<std::string*>(f.ref(record)) = values[0];
    });
  }
}

template <typename Record>
void write_columns(hid_t object, const FieldGroup<Record>& group, std::vector<Record> rows) {
  Record probe{};
  for (const auto& f : group.fields) {
    std::visit([&](auto* kind) {
      using T = std::remove_pointer_t<decltype(kind)>;
      std::vector<Stored<T>> column;
      for (auto& row : rows) column.push_back(static_cast<Stored<T>>(*std::get<T*>(f.ref(row))));
      if constexpr (std::is_same_v<T, std::string>) h5::write_strings(object, f.name, column);
      else h5::write(object, f.name, column.data(), {column.size()});
    }, f.ref(probe));
  }
}

// Every column must have as many rows as the first.
template <typename Record>
std::vector<Record> read_columns(hid_t object, const FieldGroup<Record>& group) {
  std::vector<Record> rows;
  Record probe{};
  for (const auto& f : group.fields) {
    located(group.path, f.name, [&] {
      std::visit([&](auto* kind) {
        using T = std::remove_pointer_t<decltype(kind)>;
        std::vector<Stored<T>> column;
        if constexpr (std::is_same_v<T, std::string>) column = h5::read_strings(object, f.name);
        else column = h5::read_all<Stored<T>>(object, f.name);
        if (&f == &group.fields.front()) rows.resize(column.size());
        FT_REQUIRE(column.size() == rows.size(), "has ", column.size(), " rows but ", group.fields.front().name,
                   " has ", rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) *std::get<T*>(f.ref(rows[i])) = static_cast<T>(column[i]);
      }, f.ref(probe));
    });
  }
  return rows;
}

}  // namespace ft::field_h5

// A configuration error with its place as fields (file, line, column, key) beside the message, so that
// callers such as the sweep can move it to another place without reading the text.
#pragma once

#include <string>
#include <utility>

#include "runtime/error.h"

namespace ft {

// Where a configuration value was written: "file:line:column: key 'data.batch_size'".
struct ConfigPlace {
  std::string file;     // a file name, a YAML text's origin, or "--set key=value"
  int line = 0;         // 1-based; 0 when the place has no position
  int column = 0;
  std::string key;      // dotted key at fault ("" for errors about the document itself)
  std::string detail;   // text after the quoted key that narrows it, e.g. " out" for a layer's field

  ConfigPlace(std::string file_, int line_ = 0, int column_ = 0, std::string key_ = "", std::string detail_ = "")
      : file(std::move(file_)), line(line_), column(column_), key(std::move(key_)), detail(std::move(detail_)) {}

  // The same place narrowed to `more` after the key (layer fields: at.narrowed(" kernel")).
  ConfigPlace narrowed(const std::string& more) const {
    ConfigPlace place = *this;
    place.detail += more;
    return place;
  }

  std::string text() const {
    std::string out = file;
    if (line > 0) out += cat(":", line, ":", column);
    if (!key.empty()) out += cat(": key '", key, "'", detail);
    return out;
  }
};

class ConfigError : public Error {
 public:
  ConfigError(ConfigPlace place, std::string message)
      : Error(place.text() + ": " + message), place_(std::move(place)), message_(std::move(message)) {}

  const ConfigPlace& place() const { return place_; }
  const std::string& file() const { return place_.file; }
  int line() const { return place_.line; }
  int column() const { return place_.column; }
  const std::string& key() const { return place_.key; }
  const std::string& message() const { return message_; }  // without the place

 private:
  ConfigPlace place_;
  std::string message_;
};

// Throws ConfigError(place, cat(parts...)) unless `condition` holds.
template <typename... Parts>
void config_require(bool condition, const ConfigPlace& place, const Parts&... parts) {
  if (!condition) throw ConfigError(place, cat(parts...));
}

}  // namespace ft

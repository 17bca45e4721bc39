// TFRecord framing with masked CRC-32C checksums; the CRC itself is Boost.CRC's, parameterised for the
// Castagnoli polynomial, so no CRC table is written here.
#include "monitor/tf_record.h"

#include <boost/crc.hpp>

#include "monitor/proto_wire.h"

namespace ft {

std::uint32_t crc32c(std::string_view bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t masked_crc32c(std::string_view bytes) {
  const std::uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

std::string tf_record(std::string_view data) {
  std::string length;
  proto::put_le64(length, data.size());
  std::string out = length;
  proto::put_le32(out, masked_crc32c(length));
  out.append(data.data(), data.size());
  proto::put_le32(out, masked_crc32c(data));
  return out;
}

}  // namespace ft

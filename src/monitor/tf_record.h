// TFRecord framing, the container of TensorBoard event files: each record is its length, a checksum of
// the length, the data and a checksum of the data, the checksums being masked CRC-32C (Castagnoli).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ft {

// CRC-32C (polynomial 0x1EDC6F41, reflected, initial and final XOR 0xFFFFFFFF) of `bytes`.
std::uint32_t crc32c(std::string_view bytes);
// TFRecord's mask of a CRC: rotated right by 15 bits, plus 0xA282EAD8 (modulo 2^32).
std::uint32_t masked_crc32c(std::string_view bytes);
// One record: uint64 length (little-endian), masked CRC of those 8 bytes, the data, masked CRC of the data.
std::string tf_record(std::string_view data);

}  // namespace ft

// libFuzzer target for the YAML config loader: ft::parse_config on arbitrary bytes may only ever throw
// ft::Error; a config it accepts must survive dump -> parse -> dump unchanged and the device checks.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/loader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ft::fuzz::only_ft_error([&] {
    const ft::Config config = ft::parse_config(text, "fuzz.yaml");
    const std::string dumped = ft::dump_config(config);
    const std::string again = ft::dump_config(ft::parse_config(dumped, "dumped.yaml"));
    if (again != dumped) {
      std::fprintf(stderr, "FUZZ FINDING: dump_config is not stable under parse_config:\n%s\n---\n%s\n",
                   dumped.c_str(), again.c_str());
      std::abort();
    }
    ft::validate_for_device(config, false);
  });
  return 0;
}

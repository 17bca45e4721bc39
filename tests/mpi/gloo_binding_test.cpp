// Proof that Gloo runs on Debian's libgloo although LibTorch, loaded in the same process, exports its own
// copy of Gloo's symbols: the gloo symbols that this binary and libgloo itself call resolve into libgloo.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <link.h>

#include <string>

namespace {

std::string library_of(void* address) {
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname) return "(unresolved)";
  return info.dli_fname;
}

int find_loaded(dl_phdr_info* info, size_t, void* wanted) {
  auto* name = static_cast<std::string*>(wanted);
  const std::string path = info->dlpi_name ? info->dlpi_name : "";
  if (path.find(*name) == std::string::npos) return 0;
  *name = path;
  return 1;
}

std::string loaded_path(std::string fragment) {
  return dl_iterate_phdr(find_loaded, &fragment) ? fragment : "";
}

#ifdef FUSETRAIN_WITH_GLOO
TEST(GlooBinding, SymbolsResolveToDebianLibgloo) {
  const std::string torch = loaded_path("libtorch_cpu.so");
  ASSERT_FALSE(torch.empty()) << "LibTorch is not loaded, so this binary cannot show the clash";
  void* torch_handle = dlopen(torch.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(torch_handle, nullptr);

  // Entry points fusetrain calls, and ones libgloo calls internally through its PLT.
  const char* symbols[] = {
      "_ZN4gloo9allreduceERKNS_16AllreduceOptionsE",             // gloo::allreduce
      "_ZN4gloo9broadcastERNS_16BroadcastOptionsE",              // gloo::broadcast
      "_ZN4gloo9transport3tcp12CreateDeviceERKNS1_4attrE",       // gloo::transport::tcp::CreateDevice
      "_ZNK4gloo7Context10getTimeoutEv",                         // gloo::Context::getTimeout
      "_ZN4gloo10rendezvous7Context15connectFullMeshERNS0_5StoreERSt10shared_ptrINS_9transport6DeviceEE",
  };
  int clashes = 0;
  for (const char* symbol : symbols) {
    void* bound = dlsym(RTLD_DEFAULT, symbol);
    EXPECT_NE(library_of(bound).find("libgloo.so"), std::string::npos)
        << symbol << " binds to " << library_of(bound);
    clashes += dlsym(torch_handle, symbol) != nullptr;
  }
  dlclose(torch_handle);
  std::printf("LibTorch (%s) also defines %d of %zu checked gloo symbols; all bind to libgloo\n", torch.c_str(),
              clashes, sizeof symbols / sizeof *symbols);
}
#endif

}  // namespace

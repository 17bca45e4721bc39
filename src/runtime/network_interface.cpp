// Chooses the network of every transport from distributed.interface: reads this host's interfaces
// (getifaddrs), checks a named one exists, and sets the variables Open MPI and NCCL read at start-up.
#include "runtime/network_interface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "runtime/error.h"
#include "runtime/host_name.h"

namespace ft {
namespace {

// Open MPI's shared-memory transport: vader in the 4.x series, sm (vader kept as an alias) from 5.0.
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
constexpr const char* kSharedMemoryOnly = "self,sm";
#else
constexpr const char* kSharedMemoryOnly = "self,vader";
#endif

std::string numeric_address(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {0};
  const void* raw = address->sa_family == AF_INET
                        ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(address)->sin_addr)
                        : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  return inet_ntop(address->sa_family, raw, text, sizeof(text)) ? text : "?";
}

// A value the environment holds that a named interface must agree with (NCCL's "=eth1" means exactly eth1).
void require_agreement(const std::string& interface, const std::string& variable, const EnvLookup& env) {
  const auto held = env(variable);
  if (!held || held->empty() || *held == interface || *held == "=" + interface) return;
  throw Error(cat("distributed.interface is '", interface, "' but the environment sets ", variable, "=", *held,
                  ": remove one of the two (the config's choice applies to every transport)"));
}

}  // namespace

std::vector<HostInterface> host_interfaces() {
  ifaddrs* list = nullptr;
  FT_CHECK(getifaddrs(&list) == 0, "getifaddrs failed: ", std::strerror(errno));
  std::vector<HostInterface> out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6)) continue;
    auto it = out.begin();
    while (it != out.end() && it->name != a->ifa_name) ++it;
    if (it == out.end()) it = out.insert(out.end(), HostInterface{a->ifa_name, {}});
    it->addresses.push_back(numeric_address(a->ifa_addr));
  }
  freeifaddrs(list);
  return out;
}

std::string describe_interfaces(const std::vector<HostInterface>& interfaces) {
  std::string text;
  for (const auto& i : interfaces) {
    std::string addresses;
    for (const auto& a : i.addresses) addresses += cat(addresses.empty() ? "" : ", ", a);
    text += cat(text.empty() ? "" : ", ", i.name, " (", addresses, ")");
  }
  return text.empty() ? "none with an address" : text;
}

void require_interface(const std::string& interface, const std::string& host,
                       const std::vector<HostInterface>& interfaces) {
  if (interface == kAutoInterface) return;
  for (const auto& i : interfaces)
    if (i.name == interface) return;
  throw Error(cat("distributed.interface: node ", host.empty() ? "(unnamed)" : host, " has no network interface '", interface,
                  "'; its interfaces: ", describe_interfaces(interfaces),
                  " (give one of these names, the same on every node, or auto)"));
}

std::optional<std::string> process_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value ? std::optional<std::string>(value) : std::nullopt;
}

std::map<std::string, std::string> mpi_transport_settings(const std::string& interface, bool one_node,
                                                           const EnvLookup& env) {
  std::map<std::string, std::string> out;
  if (one_node && !env("OMPI_MCA_btl")) out["OMPI_MCA_btl"] = kSharedMemoryOnly;
  if (interface == kAutoInterface) return out;
  require_agreement(interface, "OMPI_MCA_btl_tcp_if_include", env);
  if (const auto exclude = env("OMPI_MCA_btl_tcp_if_exclude"); exclude && !exclude->empty())
    throw Error(cat("distributed.interface is '", interface, "' but the environment sets "
                    "OMPI_MCA_btl_tcp_if_exclude=", *exclude,
                    ": Open MPI refuses both an include and an exclude list; remove one of the two"));
  if (!env("OMPI_MCA_btl_tcp_if_include")) out["OMPI_MCA_btl_tcp_if_include"] = interface;
  return out;
}

void pin_mpi_transport(const std::string& interface, bool one_node) {
  require_interface(interface, host_name(), host_interfaces());
  for (const auto& [name, value] : mpi_transport_settings(interface, one_node))
    FT_CHECK(setenv(name.c_str(), value.c_str(), 1) == 0, "setenv ", name, " failed");
}

std::string socket_interface(const std::string& interface, int node_count, const std::string& variable,
                             const EnvLookup& env) {
  if (interface != kAutoInterface) {
    require_agreement(interface, variable, env);
    return interface;
  }
  if (const auto held = env(variable); held && !held->empty()) return "";
  return node_count == 1 ? "lo" : "";
}

}  // namespace ft

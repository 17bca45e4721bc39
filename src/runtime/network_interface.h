// The one network a run's transports use (distributed.interface): this host's interfaces, and the settings
// that pin Open MPI's TCP transport, Gloo's device and NCCL's sockets to the chosen one.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ft {

// distributed.interface's value that lets the transports choose (loopback on one node).
inline const char* const kAutoInterface = "auto";

// A network interface of this host with its addresses, as getifaddrs lists them.
struct HostInterface {
  std::string name;
  std::vector<std::string> addresses;  // numeric IPv4 / IPv6
};

// This host's interfaces that hold an address, in the kernel's order.
std::vector<HostInterface> host_interfaces();

// "lo (127.0.0.1), eth0 (10.77.0.1, fe80::1)": what an error shows of a host's interfaces.
std::string describe_interfaces(const std::vector<HostInterface>& interfaces);

// Throws ft::Error naming the key, the host and its interfaces when `interface` (not auto) is not one of
// `interfaces` (the config loader has checked that it could name one).
void require_interface(const std::string& interface, const std::string& host,
                       const std::vector<HostInterface>& interfaces);

// Looks an environment variable up (a seam for tests: the process environment by default).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
std::optional<std::string> process_env(const std::string& name);

// The Open MPI variables to set before MPI_Init: on one node only shared memory and self (no TCP
// listener); a named interface becomes btl_tcp_if_include. A variable the environment already holds is
// kept (the launcher's --mca or the job's choice); one that contradicts a named interface is an error.
std::map<std::string, std::string> mpi_transport_settings(const std::string& interface, bool one_node,
                                                           const EnvLookup& env = process_env);

// Applies mpi_transport_settings to this process after checking a named interface exists here (before
// MPI_Init, when Open MPI reads them). Throws ft::Error naming this host and its interfaces.
void pin_mpi_transport(const std::string& interface, bool one_node);

// The interface a socket transport (Gloo, NCCL) opens its sockets on, given the transport's own environment
// variable: a named interface (an error when the variable names another), or for auto the variable's
// choice where set (returns "": the transport reads it), loopback on one node, else "" (its own choice).
std::string socket_interface(const std::string& interface, int node_count, const std::string& variable,
                             const EnvLookup& env = process_env);

}  // namespace ft

// Tests of distributed.interface's choices: which Open MPI variables a rank sets before MPI starts, which
// interface Gloo and NCCL bind to, and the error for a node that lacks the named interface.
#include <gtest/gtest.h>

#include "error_of.h"
#include "runtime/error.h"
#include "runtime/host_name.h"
#include "runtime/network_interface.h"

namespace ft {
namespace {

// An environment holding exactly `vars`.
EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

const std::vector<HostInterface> kNode = {{"lo", {"127.0.0.1", "::1"}}, {"eth0", {"10.77.0.1"}},
                                          {"eth1", {"10.78.0.1"}}};

using test::error_of;

TEST(NetworkInterface, OneNodeUsesSharedMemoryOnlyUnlessTheLauncherChose) {
  const auto auto_one = mpi_transport_settings("auto", true, env_of({}));
  ASSERT_EQ(auto_one.size(), 1u);
  EXPECT_EQ(auto_one.at("OMPI_MCA_btl").rfind("self,", 0), 0u) << auto_one.at("OMPI_MCA_btl");
  EXPECT_EQ(auto_one.at("OMPI_MCA_btl").find("tcp"), std::string::npos);
  EXPECT_TRUE(mpi_transport_settings("auto", true, env_of({{"OMPI_MCA_btl", "tcp,self"}})).empty());
  EXPECT_TRUE(mpi_transport_settings("auto", false, env_of({})).empty());
}

TEST(NetworkInterface, ANamedInterfaceBecomesTheTcpIncludeList) {
  const auto several = mpi_transport_settings("eth1", false, env_of({}));
  ASSERT_EQ(several.size(), 1u);
  EXPECT_EQ(several.at("OMPI_MCA_btl_tcp_if_include"), "eth1");
  const auto one = mpi_transport_settings("eth1", true, env_of({}));
  EXPECT_EQ(one.size(), 2u);
  EXPECT_EQ(one.at("OMPI_MCA_btl_tcp_if_include"), "eth1");
  EXPECT_TRUE(
      mpi_transport_settings("eth1", false, env_of({{"OMPI_MCA_btl_tcp_if_include", "eth1"}})).empty());
}

TEST(NetworkInterface, AnEnvironmentThatNamesAnotherNetworkIsRefused) {
  const std::string include = error_of(
      [] { mpi_transport_settings("eth1", false, env_of({{"OMPI_MCA_btl_tcp_if_include", "eth0"}})); });
  EXPECT_NE(include.find("distributed.interface is 'eth1'"), std::string::npos) << include;
  EXPECT_NE(include.find("OMPI_MCA_btl_tcp_if_include=eth0"), std::string::npos) << include;
  const std::string exclude = error_of(
      [] { mpi_transport_settings("eth1", false, env_of({{"OMPI_MCA_btl_tcp_if_exclude", "eth0"}})); });
  EXPECT_NE(exclude.find("OMPI_MCA_btl_tcp_if_exclude=eth0"), std::string::npos) << exclude;
  const std::string nccl =
      error_of([] { socket_interface("eth1", 2, "NCCL_SOCKET_IFNAME", env_of({{"NCCL_SOCKET_IFNAME", "ib"}})); });
  EXPECT_NE(nccl.find("NCCL_SOCKET_IFNAME=ib"), std::string::npos) << nccl;
}

TEST(NetworkInterface, SocketTransportsFollowTheConfigThenTheirVariableThenTheNodeCount) {
  const auto none = env_of({});
  EXPECT_EQ(socket_interface("eth1", 1, "NCCL_SOCKET_IFNAME", none), "eth1");
  EXPECT_EQ(socket_interface("eth1", 4, "NCCL_SOCKET_IFNAME", env_of({{"NCCL_SOCKET_IFNAME", "=eth1"}})), "eth1");
  EXPECT_EQ(socket_interface("auto", 1, "FUSETRAIN_GLOO_IFACE", none), "lo");
  EXPECT_EQ(socket_interface("auto", 2, "FUSETRAIN_GLOO_IFACE", none), "");
  EXPECT_EQ(socket_interface("auto", 1, "FUSETRAIN_GLOO_IFACE", env_of({{"FUSETRAIN_GLOO_IFACE", "eth0"}})), "");
}

TEST(NetworkInterface, AMissingInterfaceNamesTheNodeAndWhatItHas) {
  EXPECT_NO_THROW(require_interface("eth1", "node2", kNode));
  EXPECT_NO_THROW(require_interface("auto", "node2", {}));
  const std::string missing = error_of([] { require_interface("eth9", "node2", kNode); });
  EXPECT_NE(missing.find("node node2 has no network interface 'eth9'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("lo (127.0.0.1, ::1), eth0 (10.77.0.1), eth1 (10.78.0.1)"), std::string::npos) << missing;
}

TEST(NetworkInterface, ThisHostListsItsLoopback) {
  const auto here = host_interfaces();
  bool loopback = false;
  for (const auto& i : here)
    for (const auto& a : i.addresses) loopback = loopback || a == "127.0.0.1" || a == "::1";
  EXPECT_TRUE(loopback) << describe_interfaces(here);
  EXPECT_FALSE(host_name().empty());
}

}  // namespace
}  // namespace ft

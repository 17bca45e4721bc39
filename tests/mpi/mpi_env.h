// Shared state of the mpi_tests binary: the MPI world every rank runs in (test_world.h) and one long-lived
// backend of each host kind built here, so that most cases need no set-up of their own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/backend.h"
#include "host_backends.h"
#include "test_world.h"

namespace ft::test {

// A backend shared by all cases (stall timeout 20 s, so a broken case fails instead of hanging).
// Created on first use, which every rank reaches in the same test.
Backend& shared_backend(const std::string& name);
void release_shared_backends();

}  // namespace ft::test

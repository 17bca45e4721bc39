// Collects per-rank results on every rank: each record is packed field by field through the results
// field table (so a field added there travels without further code) and all-gathered over the world.
#pragma once

#include <string>
#include <vector>

#include "results/run_record.h"

namespace ft {

class World;

// The bytes a rank sends for its records, and the records read back from rank `rank`'s bytes: ft::Error
// (internal) naming the rank and the field when they end inside a field or give a negative length (ranks
// running different fusetrain versions).
std::string pack_rank_records(const std::vector<RankRecord>& records);
std::vector<RankRecord> unpack_rank_records(const std::string& bytes, int rank);

// Every rank's record, indexed by rank. Collective: every rank of `world` must call it.
std::vector<RankRecord> gather_rank_records(const World& world, const RankRecord& mine);
// Every rank's own rows of one or more evaluated epochs, rank 0's first. Collective.
std::vector<RankEpochRecord> gather_rank_epochs(const World& world, const std::vector<RankEpochRecord>& mine);
// Every rank's utilisation samples, rank 0's first. Collective.
std::vector<UtilizationSample> gather_utilization(const World& world, const std::vector<UtilizationSample>& mine);

}  // namespace ft

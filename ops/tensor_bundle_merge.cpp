// merge_bundles (ops/tensor_bundle.hpp): TensorFlow's MergeBundles over
// tagflow's index pieces (ops/tensor_bundle_index.hpp).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "ops/proto/tensor_bundle.pb.h"
#include "ops/tensor_bundle_index.hpp"

namespace tagflow::ops {

namespace fs = std::filesystem;
namespace pb = tagflow::checkpoint;
using namespace bundle_index;

Status merge_bundles(const std::vector<std::string>& prefixes, const std::string& destination,
                     bool allow_missing_files) {
  std::map<std::string, pb::BundleEntryProto> entries;
  std::vector<std::string> shard_files;  // new shard id -> source data file
  std::unordered_map<std::string, int> shard_ids;
  std::vector<std::string> merged_indexes;
  int num_shards = 0;
  std::optional<Header> first;
  for (const std::string& prefix : prefixes) {
    const std::string path = bundle_index_filename(prefix);
    std::error_code ec;
    if (allow_missing_files && !fs::exists(path, ec)) continue;
    TF_ASSIGN_OR_RETURN(auto table, read_bundle_index(path));
    TF_ASSIGN_OR_RETURN(Header header, parse_header(table, path));
    if (!first) {
      first = header;
    } else if (header.version != first->version) {
      return Status(Error::invalid_argument,
                    path + ": merging bundles of different format versions");
    }
    num_shards += header.num_shards;
    merged_indexes.push_back(path);
    for (size_t i = 1; i < table.size(); ++i) {
      const std::string& key = table[i].first;
      // Checks the entry as a reader would before it is carried over.
      TF_RETURN_IF_ERROR(parse_entry(key, table[i].second, header.num_shards, path).status());
      pb::BundleEntryProto entry;
      entry.ParseFromString(table[i].second);
      auto existing = entries.find(key);
      if (existing != entries.end()) {
        // Only a partitioned variable's full entry may come from several
        // bundles: its slices add up.
        if (existing->second.slices().empty() || entry.slices().empty())
          return Status(Error::invalid_argument,
                        fmt::format("{}: tensor '{}' is in two of the bundles being merged", path, key));
        for (const auto& slice : entry.slices()) *existing->second.add_slices() = slice;
        continue;
      }
      if (entry.slices().empty()) {
        const std::string file = bundle_data_filename(prefix, entry.shard_id(), header.num_shards);
        auto [it, added] = shard_ids.emplace(file, static_cast<int>(shard_files.size()));
        if (added) shard_files.push_back(file);
        entry.set_shard_id(it->second);
      }
      entries.emplace(key, std::move(entry));
    }
  }
  if (!first)
    return Status(Error::not_found, fmt::format("merging into '{}': none of the {} checkpoints to merge exists",
                                                destination, prefixes.size()));
  TF_RETURN_IF_ERROR(create_parent_directory(destination));
  const int merged_shards = shard_files.empty() ? std::max(num_shards, 1) : static_cast<int>(shard_files.size());
  for (size_t i = 0; i < shard_files.size(); ++i)
    TF_RETURN_IF_ERROR(rename_file(shard_files[i],
                                   bundle_data_filename(destination, static_cast<int>(i), merged_shards)));
  pb::BundleHeaderProto header;
  header.set_num_shards(merged_shards);
  header.set_endianness(first->endianness);
  header.mutable_version()->ParseFromString(first->version);
  std::map<std::string, std::string> serialized;
  for (const auto& [key, entry] : entries) serialized.emplace(key, entry.SerializeAsString());
  const std::string merged_index = bundle_index_filename(destination);
  TF_RETURN_IF_ERROR(write_index(merged_index, header.SerializeAsString(), serialized));
  for (const std::string& path : merged_indexes)
    if (path != merged_index) remove_quietly(path);
  return ok_status();
}

}  // namespace tagflow::ops

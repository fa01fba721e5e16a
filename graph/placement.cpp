#include "graph/placement.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <random>

#include "graph/device.hpp"

namespace tagflow::graph {

Expected<PlacementOptions> parse_place_option(std::string_view text) {
  PlacementOptions o;
  if (text == "default") return o;
  if (text == "round-robin") {
    o.strategy = PlacementOptions::Strategy::round_robin;
    return o;
  }
  constexpr std::string_view kRandom = "random:";
  if (text.substr(0, kRandom.size()) == kRandom) {
    std::string_view seed = text.substr(kRandom.size());
    auto [end, ec] = std::from_chars(seed.data(), seed.data() + seed.size(), o.seed);
    if (ec == std::errc() && end == seed.data() + seed.size() && !seed.empty()) {
      o.strategy = PlacementOptions::Strategy::random;
      return o;
    }
  }
  return Status(Error::invalid_argument,
                fmt::format("placement '{}': expected default, round-robin or random:SEED", ops::abbreviate(text)));
}

namespace {

using ops::OpRole;

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) parent_[static_cast<size_t>(i)] = i;
  }
  int find(int x) {
    while (parent_[static_cast<size_t>(x)] != x) {
      int& p = parent_[static_cast<size_t>(x)];
      p = parent_[static_cast<size_t>(p)];
      x = p;
    }
    return x;
  }
  // The lower id becomes the root, so a group's root is its lowest NodeId.
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[static_cast<size_t>(b)] = a;
  }

 private:
  std::vector<int> parent_;
};

// The colocation rules of the header comment.
void colocate(const Graph& g, UnionFind& groups) {
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (const ops::AttrValue* cls = n.attrs.count("_class") ? &n.attrs.at("_class") : nullptr)
      if (const ops::AttrList* list = cls->get_if<ops::AttrList>())
        for (const std::string& s : list->s)
          if (s.rfind("loc:@", 0) == 0)
            if (NodeId other = g.find(s.substr(5)); other != kNoNode) groups.unite(id, other);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      DType t = i < n.input_types.size() ? n.input_types[i] : DType::invalid;
      if (ops::is_ref(t) || ops::base_dtype(t) == DType::resource) groups.unite(id, n.inputs[i].node);
    }
    switch (node_role(n)) {
      case OpRole::switch_op:
      case OpRole::exit:
        if (!n.inputs.empty()) groups.unite(id, n.inputs[0].node);
        break;
      case OpRole::next_iteration:
        for (const OutEdge& e : g.out_edges(id))
          if (e.dst_input != kControlPort) groups.unite(id, e.dst);
        break;
      case OpRole::enter:
        // Only the first: the partitioner clones an Enter for consumers
        // elsewhere, and a loop invariant must not glue its loop together.
        for (const OutEdge& e : g.out_edges(id))
          if (e.dst_input != kControlPort) {
            groups.unite(id, e.dst);
            break;
          }
        break;
      default:
        break;
    }
  }
}

struct Group {
  std::vector<NodeId> members;
  DeviceName spec;
  NodeId constrained_by = kNoNode;  // the first member with a device
};

std::string device_list(const std::vector<std::string>& devices) {
  return devices.empty() ? "none" : fmt::format("{}", fmt::join(devices, ", "));
}

// Merges the members' device constraints.
Status merge_specs(const Graph& g, Group& group) {
  std::vector<std::pair<NodeId, DeviceName>> seen;
  for (NodeId id : group.members) {
    const Node& n = g.node(id);
    auto d = parse_device_name(n.device);
    if (!d.ok()) return d.status().with_prefix(fmt::format("node '{}': ", n.name));
    if (d->empty()) continue;
    if (!compatible(group.spec, *d)) {
      for (const auto& [other, spec] : seen)
        if (!compatible(spec, *d))
          return Status(Error::invalid_argument,
                        fmt::format("node '{}' is on device '{}' and node '{}' on device '{}', but "
                                    "they must share a device (colocation)",
                                    g.node(other).name, g.node(other).device, n.name, n.device));
    }
    group.spec = *merge(group.spec, *d);
    if (group.constrained_by == kNoNode) group.constrained_by = id;
    seen.emplace_back(id, *d);
  }
  return ok_status();
}

}  // namespace

Status place(Graph* g, const std::vector<std::string>& devices, const PlacementOptions& options) {
  if (devices.empty()) return Status(Error::invalid_argument, "placement: the session has no devices");
  std::vector<DeviceName> parsed;
  std::vector<std::string> canonical;
  for (const std::string& d : devices) {
    TF_ASSIGN_OR_RETURN(DeviceName name, parse_device_name(d));
    if (!name.job || !name.replica || !name.task || !name.type || !name.id)
      return Status(Error::invalid_argument,
                    fmt::format("placement: session device '{}' is not a full device name", d));
    parsed.push_back(name);
    canonical.push_back(full_name(name));
  }

  UnionFind uf(g->num_nodes());
  colocate(*g, uf);
  std::map<NodeId, Group> groups;  // by root = lowest member id: NodeId order
  for (NodeId id = 0; id < g->num_nodes(); ++id) groups[uf.find(id)].members.push_back(id);

  std::mt19937_64 rng(options.seed);
  size_t next = 0;
  for (auto& [root, group] : groups) {
    TF_RETURN_IF_ERROR(merge_specs(*g, group));
    auto candidates = [&](const DeviceName& spec) {
      std::vector<size_t> out;
      for (size_t i = 0; i < parsed.size(); ++i)
        if (matches(spec, parsed[i])) out.push_back(i);
      return out;
    };
    std::vector<size_t> fits = candidates(group.spec);
    if (fits.empty() && options.soft && group.spec.type) {
      bool type_known = false;
      for (const DeviceName& d : parsed) type_known |= d.type == group.spec.type;
      if (!type_known) {
        DeviceName relaxed = group.spec;
        relaxed.type.reset();
        relaxed.id.reset();
        fits = candidates(relaxed);
      }
    }
    if (fits.empty()) {
      const Node& n = g->node(group.constrained_by);
      std::string merged = full_name(group.spec);
      return Status(Error::invalid_argument,
                    fmt::format("node '{}' requests device '{}'{}, which none of the available "
                                "devices matches: {}",
                                n.name, n.device,
                                merged == full_name(*parse_device_name(n.device))
                                    ? ""
                                    : fmt::format(" (with its colocated nodes: '{}')", merged),
                                device_list(canonical)));
    }
    size_t pick = fits.front();
    switch (options.strategy) {
      case PlacementOptions::Strategy::by_default:
        break;
      case PlacementOptions::Strategy::round_robin:
        pick = fits[next++ % fits.size()];
        break;
      case PlacementOptions::Strategy::random:
        pick = fits[rng() % fits.size()];
        break;
    }
    for (NodeId id : group.members) g->mutable_node(id).device = canonical[pick];
  }
  return ok_status();
}

}  // namespace tagflow::graph

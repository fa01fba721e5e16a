#include "trace/trace.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "trace/codec.hpp"

namespace tagflow::trace {

namespace {
std::mutex process_header_mu;
Header& process_header_ref() {
  static Header h;
  return h;
}
}  // namespace

void set_process_header(Header header) {
  std::lock_guard<std::mutex> lock(process_header_mu);
  process_header_ref() = std::move(header);
}

Header process_header() {
  std::lock_guard<std::mutex> lock(process_header_mu);
  return process_header_ref();
}

Trace::Trace(std::vector<Event> events, std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables,
             Header header)
    : events_(std::move(events)), header_(std::move(header)), tables_(std::move(tables)) {
  for (const Event& e : events_) {
    if (e.kind == Kind::step_started) table_of_[{e.step, e.partition}] = e.key;
  }
  for (const Event& e : events_) {
    if (e.kind != Kind::frame_created || instances_.count(e.instance) != 0) continue;
    const PartitionNames* t = names_of(e);
    instances_[e.instance] = Instance{e.parent_instance, e.parent_iteration,
                                      t != nullptr ? t->frame(e.node) : fmt::format("frame {}", e.node)};
  }
}

const PartitionNames* Trace::names(uint64_t step, int32_t partition) const {
  auto it = table_of_.find({step, partition});
  if (it == table_of_.end()) return nullptr;
  auto t = tables_.find(it->second);
  return t == tables_.end() ? nullptr : t->second.get();
}

std::string Trace::partition_name(uint64_t step, int32_t partition) const {
  const PartitionNames* t = names(step, partition);
  return t != nullptr && !t->partition.empty() ? t->partition : fmt::format("partition {}", partition);
}

std::string Trace::node_name(uint64_t step, int32_t partition, int32_t node) const {
  const PartitionNames* t = names(step, partition);
  if (t != nullptr && !t->node(node).empty()) return t->node(node);
  return fmt::format("node {}", node);
}

std::string Trace::op(uint64_t step, int32_t partition, int32_t node) const {
  const PartitionNames* t = names(step, partition);
  return t != nullptr ? t->op(node) : std::string();
}

std::string Trace::frame_name(uint64_t instance) const {
  auto it = instances_.find(instance);
  return it == instances_.end() ? std::string() : it->second.frame;
}

bool Trace::parent(uint64_t instance, uint64_t* parent_instance, int64_t* parent_iteration) const {
  auto it = instances_.find(instance);
  if (it == instances_.end()) return false;
  *parent_instance = it->second.parent;
  *parent_iteration = it->second.parent_iteration;
  return true;
}

std::string Trace::tag(uint64_t instance, int64_t iteration) const {
  if (instance == 0) return "/";
  std::vector<std::pair<std::string, int64_t>> path;
  std::set<uint64_t> seen;
  for (uint64_t i = instance; i != 0 && seen.insert(i).second;) {
    auto it = instances_.find(i);
    if (it == instances_.end()) {
      path.emplace_back(fmt::format("{:#x}", i), iteration);
      break;
    }
    path.emplace_back(it->second.frame, iteration);
    iteration = it->second.parent_iteration;
    i = it->second.parent;
  }
  std::string out;
  for (size_t k = path.size(); k-- > 0;) {
    if (!out.empty()) out += '/';
    out += fmt::format("{}/{}", path[k].first, path[k].second);
  }
  return out;
}

std::vector<uint64_t> Trace::steps() const {
  std::vector<uint64_t> out;
  std::set<uint64_t> seen;
  for (const Event& e : events_)
    if (e.kind == Kind::step_started && seen.insert(e.step).second) out.push_back(e.step);
  return out;
}

std::vector<size_t> Trace::of_step(uint64_t step) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < events_.size(); ++i)
    if (events_[i].step == step) out.push_back(i);
  return out;
}

// ---------------------------------------------------------------- reading

namespace {

bool read_actor(const nlohmann::json& j, ActorRef* a) {
  if (!j.is_object() || !parse_role(j.at("role").get<std::string>(), &a->role)) return false;
  a->partition = j.at("partition").get<int32_t>();
  a->instance = j.at("instance").get<uint64_t>();
  a->index = j.at("index").get<int64_t>();
  return true;
}

template <class T>
void optional(const nlohmann::json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it != j.end()) *out = it->get<T>();
}

bool read_jsonl(const std::string& bytes, std::vector<Event>* events,
                std::map<uint64_t, std::shared_ptr<const PartitionNames>>* tables, Header* head,
                std::string* error) {
  std::istringstream in(bytes);
  std::string line;
  size_t number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (!header) {
        if (!j.is_object() || !j.contains("tagflow_trace"))
          throw std::runtime_error("not a tagflow trace (no {\"tagflow_trace\": version} header)");
        if (j.at("tagflow_trace").get<int>() != kSchemaVersion)
          throw std::runtime_error(fmt::format("schema version {}, this tagflow reads version {}",
                                               j.at("tagflow_trace").dump(), kSchemaVersion));
        if (auto h = j.find("header"); h != j.end()) *head = h->get<Header>();
        header = true;
        continue;
      }
      if (j.contains("names")) {
        auto t = std::make_shared<PartitionNames>();
        t->partition = j.at("partition").get<std::string>();
        t->nodes = j.at("nodes").get<std::vector<std::string>>();
        t->ops = j.at("ops").get<std::vector<std::string>>();
        t->frames = j.at("frames").get<std::vector<std::string>>();
        for (const auto& x : j.at("transfers")) t->transfers.emplace_back(x.at(0).get<uint64_t>(), x.at(1).get<std::string>());
        (*tables)[j.at("names").get<uint64_t>()] = std::move(t);
        continue;
      }
      Event e;
      if (!parse_kind(j.at("event").get<std::string>(), &e.kind))
        throw std::runtime_error("unknown event " + j.at("event").dump());
      e.time_ns = j.at("t").get<int64_t>();
      optional(j, "thread", &e.thread);
      e.step = j.at("step").get<uint64_t>();
      e.partition = j.at("partition").get<int32_t>();
      optional(j, "instance", &e.instance);
      optional(j, "iteration", &e.iteration);
      optional(j, "node", &e.node);
      optional(j, "port", &e.port);
      optional(j, "src_node", &e.src_node);
      optional(j, "src_port", &e.src_port);
      if (auto m = j.find("message"); m != j.end() && !parse_message_kind(m->get<std::string>(), &e.message))
        throw std::runtime_error("unknown message kind " + m->dump());
      optional(j, "dead", &e.dead);
      optional(j, "key", &e.key);
      optional(j, "parent_instance", &e.parent_instance);
      optional(j, "parent_iteration", &e.parent_iteration);
      optional(j, "bytes", &e.bytes);
      optional(j, "duration", &e.duration_ns);
      if (auto a = j.find("from"); a != j.end() && !read_actor(*a, &e.from)) throw std::runtime_error("bad \"from\"");
      if (auto a = j.find("to"); a != j.end() && !read_actor(*a, &e.to)) throw std::runtime_error("bad \"to\"");
      optional(j, "seq", &e.seq);
      optional(j, "text", &e.text);
      events->push_back(std::move(e));
    } catch (const std::exception& ex) {
      *error = fmt::format("line {}: {}", number, ex.what());
      return false;
    }
  }
  if (!header) {
    *error = "not a tagflow trace (empty)";
    return false;
  }
  return true;
}

bool read_binary(const std::string& bytes, std::vector<Event>* events,
                 std::map<uint64_t, std::shared_ptr<const PartitionNames>>* tables, Header* head,
                 std::string* error) {
  if (bytes.size() < 12) {
    *error = "byte 0: a binary trace's header is 12 bytes";
    return false;
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  if (version != kSchemaVersion) {
    *error = fmt::format("byte 8: schema version {}, this tagflow reads version {}", version, kSchemaVersion);
    return false;
  }
  codec::BinaryReader r(std::string_view(bytes).substr(12));
  if (!r.header(head)) {
    *error = fmt::format("byte {}: a malformed header", 12 + r.pos());
    return false;
  }
  while (!r.done()) {
    const size_t at = 12 + r.pos();
    uint8_t type = 0;
    bool ok = r.u8(&type);
    if (ok && type == codec::kEventRecord) {
      Event e;
      ok = r.event(&e);
      if (ok) events->push_back(std::move(e));
    } else if (ok && type == codec::kNamesRecord) {
      uint64_t id = 0;
      auto t = std::make_shared<PartitionNames>();
      ok = r.names(&id, t.get());
      if (ok) (*tables)[id] = std::move(t);
    } else {
      ok = false;
    }
    if (!ok) {
      *error = fmt::format("byte {}: malformed record", at);
      return false;
    }
  }
  return true;
}

}  // namespace

bool read_trace(const std::string& path, Trace* out, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = fmt::format("cannot read the trace file '{}': {}", path, std::strerror(errno));
    return false;
  }
  std::stringstream buf;
  buf << f.rdbuf();
  const std::string bytes = buf.str();
  std::vector<Event> events;
  std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables;
  std::string why;
  const bool binary = bytes.size() >= 8 && std::memcmp(bytes.data(), codec::kBinaryMagic, 8) == 0;
  Header header;
  if (!(binary ? read_binary(bytes, &events, &tables, &header, &why)
               : read_jsonl(bytes, &events, &tables, &header, &why))) {
    *error = fmt::format("trace file '{}': {}", path, why);
    return false;
  }
  *out = Trace(std::move(events), std::move(tables), std::move(header));
  return true;
}

}  // namespace tagflow::trace

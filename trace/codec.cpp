#include "trace/codec.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tagflow::trace::codec {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out;
}

void json_actor(std::string& out, const char* name, const ActorRef& a) {
  if (a.role == Role::none) return;
  out += fmt::format(R"(,"{}":{{"role":"{}","partition":{},"instance":{},"index":{}}})", name, to_string(a.role),
                     a.partition, a.instance, a.index);
}

void put_var(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void put_svar(std::string* out, int64_t v) {
  put_var(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));  // zigzag
}
void put_str(std::string* out, const std::string& s) {
  put_var(out, s.size());
  out->append(s);
}
void put_actor(std::string* out, const ActorRef& a) {
  out->push_back(static_cast<char>(a.role));
  put_svar(out, a.partition);
  put_var(out, a.instance);
  put_svar(out, a.index);
}

}  // namespace

std::string json_header(const Header& header) {
  nlohmann::json j;
  j["tagflow_trace"] = kSchemaVersion;
  j["header"] = header;
  return j.dump() + "\n";
}

void binary_header(const Header& header, std::string* out) {
  put_var(out, header.size());
  for (const auto& [key, value] : header) {
    put_str(out, key);
    put_str(out, value);
  }
}

std::string json_event(const Event& e) {
  std::string out = fmt::format(R"({{"event":"{}","t":{},"thread":{},"step":{},"partition":{})", to_string(e.kind),
                                e.time_ns, e.thread, e.step, e.partition);
  if (e.instance != 0) out += fmt::format(R"(,"instance":{})", e.instance);
  if (e.iteration != 0) out += fmt::format(R"(,"iteration":{})", e.iteration);
  if (e.node >= 0) out += fmt::format(R"(,"node":{})", e.node);
  if (e.port >= 0) out += fmt::format(R"(,"port":{})", e.port);
  if (e.src_node >= 0) out += fmt::format(R"(,"src_node":{})", e.src_node);
  if (e.src_port >= 0) out += fmt::format(R"(,"src_port":{})", e.src_port);
  if (e.message != MessageKind::none) out += fmt::format(R"(,"message":"{}")", to_string(e.message));
  if (e.dead) out += R"(,"dead":true)";
  if (e.key != 0) out += fmt::format(R"(,"key":{})", e.key);
  if (e.kind == Kind::frame_created)
    out += fmt::format(R"(,"parent_instance":{},"parent_iteration":{})", e.parent_instance, e.parent_iteration);
  if (e.bytes != 0) out += fmt::format(R"(,"bytes":{})", e.bytes);
  if (e.duration_ns != 0) out += fmt::format(R"(,"duration":{})", e.duration_ns);
  json_actor(out, "from", e.from);
  json_actor(out, "to", e.to);
  if (e.seq != 0) out += fmt::format(R"(,"seq":{})", e.seq);
  if (!e.text.empty()) out += fmt::format(R"(,"text":"{}")", escape(e.text));
  return out + "}\n";
}

std::string json_names(uint64_t id, const PartitionNames& t) {
  nlohmann::json j;
  j["names"] = id;
  j["partition"] = t.partition;
  j["nodes"] = t.nodes;
  j["ops"] = t.ops;
  j["frames"] = t.frames;
  nlohmann::json transfers = nlohmann::json::array();
  for (const auto& [key, name] : t.transfers) transfers.push_back({key, name});
  j["transfers"] = std::move(transfers);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void binary_event(const Event& e, std::string* out) {
  out->push_back(static_cast<char>(kEventRecord));
  out->push_back(static_cast<char>(e.kind));
  out->push_back(static_cast<char>(e.message));
  out->push_back(static_cast<char>(e.dead ? 1 : 0));
  for (int32_t v : {e.partition, e.node, e.port, e.src_node, e.src_port}) put_svar(out, v);
  put_var(out, e.thread);
  put_var(out, e.step);
  put_var(out, e.instance);
  put_svar(out, e.iteration);
  put_var(out, e.key);
  put_var(out, e.parent_instance);
  put_svar(out, e.parent_iteration);
  put_svar(out, e.bytes);
  put_svar(out, e.time_ns);
  put_svar(out, e.duration_ns);
  put_actor(out, e.from);
  put_actor(out, e.to);
  put_var(out, e.seq);
  put_str(out, e.text);
}

void binary_names(uint64_t id, const PartitionNames& t, std::string* out) {
  out->push_back(static_cast<char>(kNamesRecord));
  put_var(out, id);
  put_str(out, t.partition);
  put_var(out, t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    put_str(out, t.nodes[i]);
    put_str(out, i < t.ops.size() ? t.ops[i] : std::string());
  }
  put_var(out, t.frames.size());
  for (const std::string& f : t.frames) put_str(out, f);
  put_var(out, t.transfers.size());
  for (const auto& [key, name] : t.transfers) {
    put_var(out, key);
    put_str(out, name);
  }
}

bool BinaryReader::u8(uint8_t* v) {
  if (pos_ >= bytes_.size()) return false;
  *v = static_cast<uint8_t>(bytes_[pos_++]);
  return true;
}

bool BinaryReader::var(uint64_t* v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = 0;
    if (!u8(&b)) return false;
    x |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = x;
      return true;
    }
  }
  return false;
}

bool BinaryReader::svar(int64_t* v) {
  uint64_t x = 0;
  if (!var(&x)) return false;
  *v = static_cast<int64_t>(x >> 1) ^ -static_cast<int64_t>(x & 1);
  return true;
}

bool BinaryReader::str(std::string* s) {
  uint64_t n = 0;
  if (!var(&n) || n > bytes_.size() - pos_) return false;
  s->assign(bytes_.substr(pos_, n));
  pos_ += n;
  return true;
}

namespace {

template <class T>
bool narrow(int64_t v, T* out) {
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) || v > static_cast<int64_t>(std::numeric_limits<T>::max()))
    return false;
  *out = static_cast<T>(v);
  return true;
}

}  // namespace

bool BinaryReader::event(Event* e) {
  uint8_t kind = 0, message = 0, dead = 0;
  if (!u8(&kind) || !u8(&message) || !u8(&dead) || kind >= kNumKinds || message >= kNumMessageKinds || dead > 1)
    return false;
  e->kind = static_cast<Kind>(kind);
  e->message = static_cast<MessageKind>(message);
  e->dead = dead != 0;
  for (int32_t* f : {&e->partition, &e->node, &e->port, &e->src_node, &e->src_port}) {
    int64_t v = 0;
    if (!svar(&v) || !narrow(v, f)) return false;
  }
  uint64_t thread = 0;
  if (!var(&thread) || thread > UINT32_MAX) return false;
  e->thread = static_cast<uint32_t>(thread);
  if (!var(&e->step) || !var(&e->instance) || !svar(&e->iteration) || !var(&e->key) || !var(&e->parent_instance) ||
      !svar(&e->parent_iteration) || !svar(&e->bytes) || !svar(&e->time_ns) || !svar(&e->duration_ns))
    return false;
  for (ActorRef* a : {&e->from, &e->to}) {
    uint8_t role = 0;
    int64_t partition = 0;
    if (!u8(&role) || role > static_cast<uint8_t>(Role::worker) || !svar(&partition) ||
        !narrow(partition, &a->partition) || !var(&a->instance) || !svar(&a->index))
      return false;
    a->role = static_cast<Role>(role);
  }
  return var(&e->seq) && str(&e->text);
}

bool BinaryReader::header(Header* h) {
  uint64_t n = 0;
  if (!var(&n) || n > bytes_.size()) return false;
  for (uint64_t i = 0; i < n; ++i) {
    std::string key, value;
    if (!str(&key) || !str(&value)) return false;
    (*h)[key] = value;
  }
  return true;
}

bool BinaryReader::names(uint64_t* id, PartitionNames* t) {
  uint64_t n = 0;
  if (!var(id) || !str(&t->partition) || !var(&n) || n > bytes_.size()) return false;
  t->nodes.resize(n);
  t->ops.resize(n);
  for (size_t i = 0; i < n; ++i)
    if (!str(&t->nodes[i]) || !str(&t->ops[i])) return false;
  if (!var(&n) || n > bytes_.size()) return false;
  t->frames.resize(n);
  for (std::string& f : t->frames)
    if (!str(&f)) return false;
  if (!var(&n) || n > bytes_.size()) return false;
  t->transfers.resize(n);
  for (auto& [key, name] : t->transfers)
    if (!var(&key) || !str(&name)) return false;
  return true;
}

}  // namespace tagflow::trace::codec

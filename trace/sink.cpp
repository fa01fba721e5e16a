#include "trace/sink.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

#include "trace/codec.hpp"

namespace tagflow::trace {

uint32_t thread_number() {
  static std::atomic<uint32_t> next{1};
  thread_local uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

void Sink::record(Event e) {
  if (e.time_ns == kNoTime) e.time_ns = now_ns();
  if (e.thread == 0) e.thread = thread_number();
  write(std::move(e));
}

uint64_t Sink::names(const std::shared_ptr<const PartitionNames>& table) {
  std::lock_guard<std::mutex> lock(names_mu_);
  auto [it, fresh] = ids_.try_emplace(table.get(), ids_.size() + 1);
  if (fresh) {
    tables_.push_back(table);
    write_names(it->second, table);
  }
  return it->second;
}

int64_t Sink::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - epoch_).count();
}

// ---------------------------------------------------------------- memory

void MemorySink::write(Event&& e) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(e));
}

void MemorySink::write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) {
  std::lock_guard<std::mutex> lock(mu_);
  tables_[id] = table;
}

Trace MemorySink::trace() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Trace(events_, tables_);
}

std::vector<Event> MemorySink::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

void MemorySink::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
}

// ------------------------------------------------------------------ files

FileSink::~FileSink() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    put_header_locked();
  }
  std::fclose(file_);
}

void FileSink::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  put_header_locked();
  std::fflush(file_);
}

void FileSink::put(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  put_header_locked();
  std::fwrite(bytes.data(), 1, bytes.size(), file_);
}

void FileSink::put_header_locked() {
  if (header_written_) return;
  header_written_ = true;
  const std::string head = header_bytes_(header_ ? *header_ : process_header());
  std::fwrite(head.data(), 1, head.size(), file_);
}

namespace {

std::FILE* open_for_writing(const std::string& path, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) *error = "cannot write the trace file '" + path + "': " + std::strerror(errno);
  return f;
}

}  // namespace

std::unique_ptr<JsonlSink> JsonlSink::open(const std::string& path, std::string* error, const Header* header) {
  std::FILE* f = open_for_writing(path, error);
  if (f == nullptr) return nullptr;
  std::unique_ptr<JsonlSink> sink(new JsonlSink(f, header));
  return sink;
}

std::string JsonlSink::header_bytes(const Header& header) { return codec::json_header(header); }

void JsonlSink::write(Event&& e) { put(codec::json_event(e)); }

void JsonlSink::write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) {
  put(codec::json_names(id, *table));
}

std::unique_ptr<BinarySink> BinarySink::open(const std::string& path, std::string* error, const Header* header) {
  std::FILE* f = open_for_writing(path, error);
  if (f == nullptr) return nullptr;
  std::unique_ptr<BinarySink> sink(new BinarySink(f, header));
  return sink;
}

std::string BinarySink::header_bytes(const Header& header) {
  std::string head(codec::kBinaryMagic, sizeof codec::kBinaryMagic);
  const uint32_t version = kSchemaVersion;
  for (int i = 0; i < 4; ++i) head.push_back(static_cast<char>((version >> (8 * i)) & 0xff));
  codec::binary_header(header, &head);
  return head;
}

void BinarySink::write(Event&& e) {
  std::string out;
  codec::binary_event(e, &out);
  put(out);
}

void BinarySink::write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) {
  std::string out;
  codec::binary_names(id, *table, &out);
  put(out);
}

std::unique_ptr<Sink> open_sink(const std::string& path, std::string* error, const Header* header) {
  const auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (ends_with(".jsonl") || ends_with(".json")) return JsonlSink::open(path, error, header);
  return BinarySink::open(path, error, header);
}

bool write_trace(const Trace& t, const std::string& path, std::string* error) {
  std::unique_ptr<Sink> sink = open_sink(path, error, &t.header());
  if (!sink) return false;
  std::map<const PartitionNames*, std::shared_ptr<const PartitionNames>> copies;
  for (const Event& e : t.events()) {
    Event copy = e;
    if (e.kind == Kind::step_started) {
      const PartitionNames* n = t.names(e.step, e.partition);
      if (n != nullptr) {
        auto& shared = copies[n];
        if (!shared) shared = std::make_shared<const PartitionNames>(*n);
        copy.key = sink->names(shared);
      }
    }
    sink->record(std::move(copy));
  }
  return true;
}

// -------------------------------------------------------------------- tee

// One event at a time, so that every sink gets the events in one order.
void TeeSink::write(Event&& e) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const PartitionNames> table;
  if (e.kind == Kind::step_started) {
    auto it = tables_.find(e.key);
    if (it != tables_.end()) table = it->second;
  }
  for (Sink* s : sinks_) {
    Event copy = e;
    if (table) copy.key = s->names(table);  // the table id is this sink's; each has its own
    s->record(std::move(copy));
  }
}

void TeeSink::write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) {
  std::lock_guard<std::mutex> lock(mu_);
  tables_[id] = table;
}

}  // namespace tagflow::trace

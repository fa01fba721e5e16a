#include "regression.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/io/export.hpp"
#include "graph/io/import.hpp"

namespace tagflow::difftest {

namespace {

using ops::Error;
using ops::Status;

std::string mode_text(const RunConfig& c) {
  std::string s = c.deterministic ? "deterministic" : fmt::format("threads {}", c.threads);
  if (c.no_shortcuts) s += " no-shortcuts";
  if (c.lower) s += " lower";
  if (c.mutant) s += " mutant";
  if (!c.timed) s += " untimed";
  return s;
}

Status parse_mode(const std::string& text, RunConfig* c) {
  std::istringstream in(text);
  std::string word;
  c->deterministic = false;
  while (in >> word) {
    if (word == "deterministic") {
      c->deterministic = true;
    } else if (word == "threads") {
      if (!(in >> c->threads) || c->threads < 1) return Status(Error::parse_error, "mode: 'threads' wants a count");
    } else if (word == "no-shortcuts" || word == "iteration-actors") {
      c->no_shortcuts = true;
    } else if (word == "lower") {
      c->lower = true;
    } else if (word == "mutant") {
      c->mutant = true;
    } else if (word == "untimed") {
      c->timed = false;
    } else {
      return Status(Error::parse_error, "mode: unknown word '" + word + "'");
    }
  }
  return ops::ok_status();
}

}  // namespace

Status save_case(const std::string& path, const Program& p, Form form, const std::string& found,
                 const RunConfig& config, const Outcome& reference) {
  auto e = emit(p, form);
  if (!e.ok()) return e.status();
  std::string out = "# tagflow difftest regression case\n";
  out += fmt::format("# form: {}\n# found: {}\n# devices: {}\n# place: {}\n# mode: {}\n", form_name(form), found,
                     config.devices, config.round_robin ? "round-robin" : fmt::format("random:{}", config.seed),
                     mode_text(config));
  for (const auto& [name, value] : e->feeds) out += fmt::format("# feed: {}={}\n", name, value.scalar_value<int32_t>());
  for (const std::string& f : e->fetches) out += "# fetch: " + f + "\n";
  for (const std::string& i : e->inits) out += "# init: " + i + "\n";
  out += "# reference: " + reference.summary() + "\n# program:\n";
  std::istringstream lines(p.describe());
  for (std::string line; std::getline(lines, line);) out += "#   " + line + "\n";
  out += form == Form::tf1 || form == Form::any_level ? emit_text(p, form) : graph::graph_to_text(e->graph);
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  std::ofstream f(path);
  if (!f || !(f << out)) return Status(Error::not_found, "cannot write " + path);
  return ops::ok_status();
}

ops::Expected<RegressionCase> load_case(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status(Error::not_found, "cannot read " + path);
  std::stringstream all;
  all << f.rdbuf();
  const std::string text = all.str();
  RegressionCase c;
  std::istringstream lines(text);
  int line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    if (line.rfind("# ", 0) != 0) continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(2, colon - 2), value = line.substr(colon + 2);
    const std::string where = fmt::format("{}:{}: ", path, line_no);
    if (key == "form") {
      if (!parse_form(value, &c.form)) return Status(Error::parse_error, where + "unknown form '" + value + "'");
    } else if (key == "found") {
      c.found = value;
    } else if (key == "devices") {
      c.config.devices = std::atoi(value.c_str());
      if (c.config.devices < 1) return Status(Error::parse_error, where + "devices must be at least 1");
    } else if (key == "place") {
      c.config.round_robin = value == "round-robin";
      if (!c.config.round_robin) {
        if (value.rfind("random:", 0) != 0) return Status(Error::parse_error, where + "place is round-robin or random:SEED");
        c.config.seed = std::stoull(value.substr(7));
      }
    } else if (key == "mode") {
      Status s = parse_mode(value, &c.config);
      if (!s.ok()) return s.with_prefix(where);
    } else if (key == "feed") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) return Status(Error::parse_error, where + "feed is NAME=INT");
      c.emitted.feeds.emplace_back(value.substr(0, eq), ops::Tensor::scalar<int32_t>(std::atoi(value.c_str() + eq + 1)));
    } else if (key == "fetch") {
      c.emitted.fetches.push_back(value);
    } else if (key == "init") {
      c.emitted.inits.push_back(value);
    } else if (key == "reference") {
      c.reference = value;
    }
  }
  if (c.emitted.fetches.empty()) return Status(Error::parse_error, path + ": no '# fetch:' line");
  TF_ASSIGN_OR_RETURN(c.emitted.graph, graph::import_graph_text(text, path));
  return c;
}

}  // namespace tagflow::difftest

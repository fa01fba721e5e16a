// The documents hold together: every relative link of a Markdown file
// names a file that exists, and every reference to a document of docs/
// anywhere in the tree (code comments, scripts, documents) names one that
// exists — and, followed by `, "Section"`, a section it has (a heading,
// its numbering aside, or a paragraph led by that text in bold).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = TAGFLOW_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The project's own text files: sources, scripts, documents (not build
// directories, test data, the generated ops catalogue's inputs, or npm's
// packages installed beside a benchmark).
std::vector<fs::path> tree_files() {
  static const std::set<std::string> folders = {"actors", "graph", "ops",     "trace",   "net",     "tools", "tests",
                                                "bench",  "fuzz",  "scripts", "examples", "docs",  "configs", "cmake"};
  static const std::set<std::string> extensions = {".hpp", ".cpp", ".md", ".txt", ".sh", ".py", ".ini", ".in", ".cmake"};
  std::vector<fs::path> out{kRoot / "README.md", kRoot / "CMakeLists.txt"};
  for (const std::string& f : folders) {
    if (!fs::exists(kRoot / f)) continue;
    for (auto it = fs::recursive_directory_iterator(kRoot / f); it != fs::recursive_directory_iterator(); ++it) {
      const fs::path& p = it->path();
      if (it->is_directory() && (p.filename() == "data" || p.filename() == "corpus" || p.filename() == "flamegraphs" ||
                                 p.filename() == "node_modules")) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && extensions.count(p.extension().string())) out.push_back(p);
    }
  }
  return out;
}

std::string in_tree(const fs::path& p) { return fs::relative(p, kRoot).string(); }

// What a section reference may name in a document: its headings' texts
// and the bold text that leads a paragraph or a list item.
std::set<std::string> sections(const fs::path& doc) {
  std::set<std::string> out;
  std::istringstream lines(read(doc));
  static const std::regex heading(R"(^#+\s+(?:\d+[a-z]?\.\s+)?(.*?)\s*$)");
  static const std::regex bold(R"(^(?:[-*]\s+|\d+\.\s+)?\*\*([^*]+?)[.:]?\*\*)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, heading)) out.insert(m[1]);
    else if (std::regex_search(line, m, bold)) out.insert(m[1]);
  }
  return out;
}

bool has_section(const std::set<std::string>& in, const std::string& name) {
  for (const std::string& s : in)
    if (s == name || s.rfind(name, 0) == 0) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(docs)

BOOST_AUTO_TEST_CASE(every_relative_link_of_a_markdown_file_resolves) {
  static const std::regex link(R"(\[[^\]]*\]\(([^)\s]+)\))");
  int links = 0;
  for (const fs::path& f : tree_files()) {
    if (f.extension() != ".md") continue;
    const std::string text = read(f);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1];
      if (target.rfind("http", 0) == 0 || target.rfind("mailto:", 0) == 0 || target[0] == '#') continue;
      target = target.substr(0, target.find('#'));
      ++links;
      BOOST_TEST(fs::exists(f.parent_path() / target), in_tree(f) << " links to " << target << ", which does not exist");
    }
  }
  BOOST_TEST_MESSAGE(links << " relative links");
}

BOOST_AUTO_TEST_CASE(every_reference_to_a_document_and_its_section_resolves) {
  // the document's path, optionally followed by ', "Section"' or ' "Section"'
  static const std::regex ref(R"re(docs/([A-Za-z_]+)\.md(?:,?\s+"([^"\n]+)")?)re");
  std::map<std::string, std::set<std::string>> known;
  int refs = 0, with_section = 0;
  for (const fs::path& f : tree_files()) {
    const std::string text = read(f);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator(); ++it) {
      const std::string doc = std::string((*it)[1]) + ".md";
      const fs::path path = kRoot / "docs" / doc;
      ++refs;
      if (!fs::exists(path)) {
        BOOST_TEST(false, in_tree(f) << " refers to docs/" << doc << ", which does not exist");
        continue;
      }
      if (!(*it)[2].matched) continue;
      ++with_section;
      auto [k, is_new] = known.emplace(doc, std::set<std::string>{});
      if (is_new) k->second = sections(path);
      const std::string section = (*it)[2];
      BOOST_TEST(has_section(k->second, section),
                 in_tree(f) << " refers to docs/" << doc << ", \"" << section << "\", which it has no section of");
    }
  }
  BOOST_TEST(refs > 50);
  BOOST_TEST_MESSAGE(refs << " references, " << with_section << " to a section");
}

BOOST_AUTO_TEST_SUITE_END()

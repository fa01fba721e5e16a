// tagflow: the command-line program. Thin: parses flags, calls the libraries.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"tagflow: a dataflow runtime with dynamic control flow"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

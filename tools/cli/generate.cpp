// Placeholder until the generate subcommand lands (being written now).
#include "commands.hpp"
void graphtier::cli::register_generate(CLI::App& app, const GlobalOptions&) { app.add_subcommand("generate", "(in progress)"); }

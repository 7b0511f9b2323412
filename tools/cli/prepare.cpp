// Placeholder until the prepare subcommand lands (being written now).
#include "commands.hpp"
void graphtier::cli::register_prepare(CLI::App& app, const GlobalOptions&) { app.add_subcommand("prepare", "(in progress)"); }

// Placeholder until the convert subcommand lands (being written now).
#include "commands.hpp"
void graphtier::cli::register_convert(CLI::App& app, const GlobalOptions&) { app.add_subcommand("convert", "(in progress)"); }

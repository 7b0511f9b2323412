// Translation unit for a module with no sources of its own yet.

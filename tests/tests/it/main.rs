//! The integration tests of the workspace tools, one program: each file is a module.

mod tidy;

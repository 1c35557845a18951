//! Cline and its forks (Roo Code, the legacy Kilo Code task folders).

pub mod cline;

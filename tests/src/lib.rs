//! End-to-end tests of gpukb over recorded machine fixtures live in `tests/tests/`;
//! this library only helps them find fixtures and the built `gpukb` binary.

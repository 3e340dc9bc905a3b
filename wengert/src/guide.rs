//! The guide: chapters in a teacher's order, each compiled here so that every snippet in it runs
//! as a test. The chapters are the markdown files of `docs/guide/`.

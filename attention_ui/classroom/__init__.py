"""The live class's pages' pieces: poll questions from the core, the histogram, the CSV, the
teacher's and the students' views. The store is the top-level ``classroom`` package."""

"""Practice by hand (issue 19): printable worksheets of attention exercises with answer keys."""

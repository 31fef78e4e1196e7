import sys

from attention_lab.cli import main

sys.exit(main())

import cProfile, os, runpy
pr = cProfile.Profile(); pr.enable()
try:
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "app.py"), run_name="__main__")
finally:
    pr.disable(); pr.dump_stats(os.environ.get("PROF_OUT", "/tmp/i24ui/prof.out"))

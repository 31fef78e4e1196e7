"""Check a learner's own NumPy attention against the core, step by step, in a sandbox.

- ``cases``: the learner's sentence and the hidden cases, and the core's intermediates for each;
- ``policy``: what the learner's code may do (a RestrictedPython policy, a whitelisted ``np``);
- ``worker``: the separate process that compiles and runs the code under resource limits;
- ``sandbox``: the server's side: one fresh worker per check, a warm spare, timeouts, kills;
- ``wire``: the JSON both sides exchange (arrays as base64 float64), read strictly;
- ``verdict``: pure functions turning the worker's answers into pass/fail, the first step that
  differs, the trap by name;
- ``traps``: the code generator's trap catalogue run on the same cases;
- ``report``: the verdict as text (the command line).

The threat model and the limits are in docs/code-check.md. RestrictedPython is imported only inside
the worker process (``policy``), so ``import attention_core`` still needs nothing but NumPy.
"""

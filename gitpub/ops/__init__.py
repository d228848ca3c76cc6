"""Operations: the worker, recovery (`reconcile`, `rebuild`), clean-up, a person's actions on
a job (`actions`), the dry run and the doctor."""

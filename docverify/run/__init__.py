"""Running procedures: the runner, the results store, selection."""

"""ResourceCoder: a model writes the Terraform no template covers (part of the ``terraform`` plugin).

Provisioner ``resourcecoder``: the ``terraform`` provisioner, plus (a) offline, for
Resource META without a template, a model writes one, Terraform validates and plans
it, the model repairs it from the diagnostics, and a passing one is kept as a
template candidate (``.docverify/template-candidates/<provider>/<type>.tf.j2``); (b) at
run time, :meth:`~docverify_terraform.resourcecoder.provisioner.ResourceCoderProvisioner.on_blocked`
creates what a blocked agent lacks and reports it. Command ``docverify resourcecoder``.
"""

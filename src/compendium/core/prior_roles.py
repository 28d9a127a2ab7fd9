"""The trained priors of ReLA by their role, named once: the ``priors`` stage makes a strong (supervised) prior, a
same-dataset and a cross-dataset self-supervised prior from its ``dataset`` and ``cross_dataset``, and names their
files after those datasets (:func:`trained_names`). A stage's parameters name such a prior by its role,
``"role:<role>"`` (``role:strong``, ``role:same-dataset``, ``role:cross-dataset``), and
:func:`resolve_roles` turns each into the file the ``priors`` stage makes at the same scale, so that a prior is
named in one place and a change of dataset renames it everywhere. Torch-free: the parameter layer every stage
imports reads it.

Example::

    >>> resolve_roles({"priors": ["rand", "role:strong"], "width": 16}, "fashion-mnist", "digits")
    {'priors': ['rand', 'trained:priors/fmnist_supervised.pt'], 'width': 16}
"""

from __future__ import annotations

#: short names of datasets in the files made from them: <tag>_supervised.pt, <tag>_byol.pt
TAGS = {"fashion-mnist": "fmnist"}
#: the roles of the trained priors the ``priors`` stage makes, in the order of :func:`trained_names`
TRAINED_ROLES = ("strong", "same-dataset", "cross-dataset")
#: the prefix of a prior named by its role in a stage's parameters
ROLE = "role:"


def dataset_tag(name: str) -> str:
    """The short name of a dataset in the files made from it (``fashion-mnist`` -> ``fmnist``)."""
    return TAGS.get(name, name.replace("-", ""))


def trained_names(dataset: str, cross_dataset: str) -> dict[str, str]:
    """Role -> file name (under ``priors/``, without ``.pt``) of the trained priors the ``priors`` stage makes from
    ``dataset`` and ``cross_dataset``: ``<tag>_supervised``, ``<tag>_byol`` and ``<cross tag>_byol``

    >>> trained_names("fashion-mnist", "digits")["cross-dataset"]
    'digits_byol'
    """
    tag, cross = dataset_tag(dataset), dataset_tag(cross_dataset)
    return dict(zip(TRAINED_ROLES, (f"{tag}_supervised", f"{tag}_byol", f"{cross}_byol")))


def trained_specs(dataset: str, cross_dataset: str) -> dict[str, str]:
    """Role -> the prior spec (``trained:priors/<name>.pt``) of each prior :func:`trained_names` names."""
    return {role: f"trained:priors/{n}.pt" for role, n in trained_names(dataset, cross_dataset).items()}


def role_problem(spec: str) -> str | None:
    """Why ``spec`` (``role:<role>``) names no role, or None."""
    role = str(spec)[len(ROLE) :]
    if role in TRAINED_ROLES:
        return None
    return f"{spec!r}: unknown role {role!r}; a trained prior's role is one of {', '.join(TRAINED_ROLES)}"


def resolve_roles(values: dict, dataset: str, cross_dataset: str) -> dict:
    """``values`` with every ``role:<role>`` string (alone or in a list) replaced by the spec of the prior that the
    ``priors`` stage makes for that role from ``dataset`` and ``cross_dataset``; an unknown role is an error."""
    specs = trained_specs(dataset, cross_dataset)

    def one(v):
        if isinstance(v, str) and v.startswith(ROLE):
            problem = role_problem(v)
            if problem:
                raise ValueError(problem)
            return specs[v[len(ROLE) :]]
        if isinstance(v, list):
            return [one(x) for x in v]
        return v

    return {k: one(v) for k, v in values.items()}

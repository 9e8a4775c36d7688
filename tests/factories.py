"""factory_boy factories for the stored records: a test states only what matters to it.

Each factory makes its own related records (a Run its build, config, server, workload and bundle); unique
names come from sequences. ``TargetFactory`` is a lab target no test reaches unless it says where.
"""

from __future__ import annotations

import factory
from factory.django import DjangoModelFactory

import suites
from runner.models import Target
from runs.models import Build, Bundle, Config, Dbms, Run, Server, Version, Workload


class DbmsFactory(DjangoModelFactory):
    class Meta:
        model = Dbms
        django_get_or_create = ("name",)

    name = "MySQL"


class VersionFactory(DjangoModelFactory):
    class Meta:
        model = Version
        django_get_or_create = ("dbms", "text")

    dbms = factory.SubFactory(DbmsFactory)
    text = factory.Sequence(lambda n: f"8.0.{n}")


class BuildFactory(DjangoModelFactory):
    class Meta:
        model = Build
        django_get_or_create = ("name",)

    version = factory.SubFactory(VersionFactory)
    flavour = "rel"
    name = factory.LazyAttribute(lambda build: f"my{build.version.text.replace('.', '')}_{build.flavour}")


class ConfigFactory(DjangoModelFactory):
    class Meta:
        model = Config

    name = factory.Sequence(lambda n: f"z{n}a_c8r32")
    text = ""


class ServerFactory(DjangoModelFactory):
    class Meta:
        model = Server
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"server-{n}")


class WorkloadFactory(DjangoModelFactory):
    class Meta:
        model = Workload
        django_get_or_create = ("suite", "name")

    suite = suites.SYSBENCH.name
    name = "sysbench 1 table 10m rows"


class BundleFactory(DjangoModelFactory):
    class Meta:
        model = Bundle

    sha256 = factory.Sequence(lambda n: f"{n:064x}")
    original_name = factory.Sequence(lambda n: f"bundle-{n}.tar.gz")
    size = 1
    source = Bundle.Source.COMMAND
    status = Bundle.Status.IMPORTED


class RunFactory(DjangoModelFactory):
    class Meta:
        model = Run

    build = factory.SubFactory(BuildFactory)
    config = factory.SubFactory(ConfigFactory)
    server = factory.SubFactory(ServerFactory)
    workload = factory.SubFactory(WorkloadFactory)
    bundle = factory.SubFactory(BundleFactory)
    name = factory.LazyAttribute(lambda run: f"x.{run.build.name}.{run.config.name}.pk1")
    path = factory.LazyAttribute(lambda run: run.name)
    content_sha256 = factory.Sequence(lambda n: f"{n:064x}")


class TargetFactory(DjangoModelFactory):
    """A MariaDB target on this host by default; ``postgres=True`` for a PostgreSQL one."""

    class Meta:
        model = Target

    class Params:
        postgres = factory.Trait(name="lab PostgreSQL", kind=Target.Kind.POSTGRES, port=5432, build_label="pg1520_rel")

    name = "lab MariaDB"
    kind = Target.Kind.MARIADB
    host = "127.0.0.1"
    port = 3306
    user = "bench"
    password = "factory-secret"
    database = "sbtest"
    build_label = "ma101119_rel"
    config_label = "z12a_c8r32"
    server_name = "lab-1"

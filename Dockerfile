# One image for web, worker and beat; docker-compose.yml picks the command.

# plotly.js's cartesian bundle, pinned by package-lock.json; only its one file goes into the image.
FROM node:20-bookworm-slim AS plotly
WORKDIR /js
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error

FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# sysbench and the database clients let a worker run triggered benchmarks.
RUN apt-get update \
 && apt-get install -y --no-install-recommends sysbench procps sysstat \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The runtime lock only (hashes checked): no test, lint or development tool in the image.
COPY requirements.txt .
RUN pip install --no-cache-dir --require-hashes -r requirements.txt
# Where reports.staticfiles looks for it: <Python prefix>/js/node_modules/, as `make install` puts it in .venv/js.
COPY --from=plotly /js/node_modules/plotly.js-cartesian-dist-min /usr/local/js/node_modules/plotly.js-cartesian-dist-min
COPY . .
# In production mode, so the manifest that production's static storage serves from is written; the key
# and host are placeholders only this build step sees (the running container gets the real ones).
RUN BENCHDASH_MODE=production SECRET_KEY=collectstatic-build-step-only-never-used-by-a-container ALLOWED_HOSTS=build.invalid \
    python manage.py collectstatic --noinput --verbosity 0
# PYTHONDONTWRITEBYTECODE keeps the running container from writing .pyc files, so they are written here, once:
# otherwise every worker and command would compile the project's modules again at start (about 0.2 s each).
RUN python -m compileall -q benchdash accounts runs suites reports regressions runner

RUN useradd --create-home benchdash && mkdir -p /app/var && chown benchdash /app/var
USER benchdash
EXPOSE 8000
CMD ["gunicorn", "benchdash.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--worker-class", "gthread", "--threads", "4", "--timeout", "120", "--access-logfile", "-"]

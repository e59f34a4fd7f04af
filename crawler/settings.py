"""Settings of the runnable project (``scrapy crawl sitemap|feed``).

Everything the plugin needs comes from the add-on, exactly as in any other Scrapy project;
this module only names the project's spiders and what a standalone crawl wants on top.
"""

from __future__ import annotations

from scrapy_maintext.exporters import FEED_EXPORTERS as _FEED_EXPORTERS

BOT_NAME = "scrapy_maintext"
SPIDER_MODULES = ["scrapy_maintext.spiders"]
NEWSPIDER_MODULE = "scrapy_maintext.spiders"
#: ``crawl`` that checks spider arguments first and exits non-zero when no site was reached.
COMMANDS_MODULE = "scrapy_maintext.commands"

ADDONS = {"scrapy_maintext.Addon": 500}

# The add-on registers these too, but ``scrapy crawl -O file:tei`` checks formats before
# add-ons run, so command-line use needs them here.
FEED_EXPORTERS = dict(_FEED_EXPORTERS)

#: Who to contact about this crawler (URL or mailto:); it goes into the User-Agent so that
#: site owners can reach you. Set yours: ``-s CRAWLER_CONTACT=mailto:you@example.org`` (a
#: crawl of a site that is not on this machine warns once without it).
CRAWLER_CONTACT = ""

FEED_EXPORT_ENCODING = "utf-8"
#: A crawl that exports nothing (no site reachable, nothing new) leaves an earlier ``-O``
#: output as it was instead of truncating it to an empty file.
FEED_STORE_EMPTY = False
#: The level of ``-v`` (Scrapy's whole log). Without ``-v`` or ``-L``, the crawl command shows
#: the short console instead: progress lines, the report, warnings and errors.
LOG_LEVEL = "INFO"
#: No listening socket that runs code sent to it: neither Scrapy's telnet console nor its
#: remote-control server (on by default since Scrapy 2.19) in the bundled project.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

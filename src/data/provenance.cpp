#include "pdsp/data/provenance.hpp"

#include <sstream>

namespace pdsp {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

std::vector<std::string> split(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

Fields Provenance::fields() const {
  return {{"pdsp_version", version},
          {"pdsp_commit", commit},
          {"command_line", command_line},
          {"hosts", joined(hosts)},
          {"ranks", ranks},
          {"threads", threads},
          {"started_at", started_at},
          {"data_fingerprint", data_fingerprint},
          {"effective_config", config}};
}

void write_provenance(h5::File& file, const Provenance& provenance) {
  for (const auto& [name, value] : provenance.fields())
    std::visit([&](const auto& typed) { file.write_attribute(name, typed); }, value);
}

Provenance read_provenance(const h5::File& file) {
  Provenance p;
  const auto text = [&](const char* name) {
    return file.has_attribute(name) ? file.read_string_attribute(name) : std::string();
  };
  const auto integer = [&](const char* name) {
    return file.has_attribute(name) ? file.read_int_attribute(name) : int64_t{0};
  };
  p.version = text("pdsp_version");
  p.commit = text("pdsp_commit");
  p.command_line = text("command_line");
  p.hosts = split(text("hosts"));
  p.ranks = integer("ranks");
  p.threads = integer("threads");
  p.started_at = text("started_at");
  p.data_fingerprint = text("data_fingerprint");
  p.config = text("effective_config");
  return p;
}

}  // namespace pdsp

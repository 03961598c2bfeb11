// load_rule_pack(): manifest -> rule files -> data tables -> site rules -> compile.
// Every file read is hashed (name and bytes, in load order) into the pack fingerprint
// recorded in each verdict.
#include <algorithm>
#include <map>

#include "rules/compiler.h"
#include "rules/sha256.h"

namespace attrib::rules {

namespace {

using detail::fail;

// Pack-relative paths only: a manifest must not reach outside its own directory.
std::filesystem::path pack_relative(const std::filesystem::path& pack_dir, const std::string& name,
                                    const detail::SourceLocation& where, const std::string& field) {
  const std::filesystem::path relative(name);
  if (relative.is_absolute() || name.find("..") != std::string::npos) {
    fail(kRuleField, where, field, "must be a path inside the pack directory: " + name);
  }
  return pack_dir / relative;
}

void hash_file(detail::Sha256& hash, const std::string& name, const std::string& bytes) {
  hash.update(name);
  hash.update(std::string_view("\0", 1));
  hash.update(std::to_string(bytes.size()));
  hash.update(std::string_view("\0", 1));
  hash.update(bytes);
}

std::unique_ptr<RulePack> load(const LoadOptions& options, bool candidate_scan) {
  detail::Sha256 hash;
  std::vector<std::string> files;
  detail::DefinitionSet definitions;

  const std::filesystem::path manifest_path = options.pack_dir / "pack.yaml";
  const auto manifest_file = detail::read_yaml_file(manifest_path, manifest_path.string());
  hash_file(hash, "pack.yaml", manifest_file.text);
  files.push_back(manifest_path.string());
  definitions.manifest = detail::parse_manifest(manifest_file);

  for (const auto& [name, where] : definitions.manifest.rule_files) {
    const auto path = pack_relative(options.pack_dir, name, where, "rule_files");
    const auto file = detail::read_yaml_file(path, path.string());
    hash_file(hash, name, file.text);
    files.push_back(path.string());
    definitions.shipped.push_back(detail::parse_rule_file(file));
  }
  for (const auto& catalog : definitions.manifest.catalogs) {
    const auto path =
        pack_relative(options.pack_dir, catalog.file, catalog.where, "catalogs." + catalog.name + ".file");
    const std::string text = detail::read_text_file(path, path.string());
    hash_file(hash, catalog.file, text);
    files.push_back(path.string());
    if (definitions.catalogs.count(catalog.name))
      fail(kRuleField, catalog.where, "catalogs." + catalog.name, "duplicate catalog name");
    definitions.catalogs[catalog.name] = detail::load_catalog(catalog, text, path.string());
  }

  for (const auto& dir : options.site_dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      fail(kRuleIo, {dir.string(), 0}, "", "site rule directory does not exist");
    std::vector<std::filesystem::path> site_files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && (entry.path().extension() == ".yaml" || entry.path().extension() == ".yml")) {
        site_files.push_back(entry.path());
      }
    }
    if (ec) fail(kRuleIo, {dir.string(), 0}, "", "cannot list directory: " + ec.message());
    std::sort(site_files.begin(), site_files.end());
    for (const auto& path : site_files) {
      const auto file = detail::read_yaml_file(path, path.string());
      hash_file(hash, "site:" + path.filename().string(), file.text);
      files.push_back(path.string());
      definitions.site.push_back(detail::parse_rule_file(file));
    }
  }

  auto pack = detail::compile_pack(std::move(definitions), candidate_scan);
  pack->hash = "sha256:" + hash.finish_hex();
  pack->files = std::move(files);
  return pack;
}

Result<std::shared_ptr<const RulePack>> load_pack(const LoadOptions& options, bool candidate_scan) {
  try {
    return std::shared_ptr<const RulePack>(load(options, candidate_scan));
  } catch (const detail::LoadFailure& failure) {
    return failure.error;
  } catch (const YAML::Exception& e) {
    // Shape errors the reader did not anticipate still name the position yaml-cpp knows.
    return Error{kRuleYaml, "line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  } catch (const std::filesystem::filesystem_error& e) {
    return Error{kRuleIo, e.what()};
  }
}

}  // namespace

Result<std::shared_ptr<const RulePack>> load_rule_pack(const LoadOptions& options) { return load_pack(options, true); }

namespace detail {
Result<std::shared_ptr<const RulePack>> load_rule_pack_without_scan(const LoadOptions& options) {
  return load_pack(options, false);
}
}  // namespace detail

std::string pack_version(const RulePack& pack) { return pack.version; }
std::string pack_hash(const RulePack& pack) { return pack.hash; }

PackStats pack_stats(const RulePack& pack) {
  PackStats stats;
  stats.name = pack.name;
  stats.version = pack.version;
  stats.files = pack.files;
  stats.extraction_rules = pack.extraction.size();
  stats.correlation_rules = pack.correlation.size();
  stats.examples = pack.examples;
  for (const auto& rule : pack.extraction) {
    if (rule.block) ++stats.block_rules;
    if (!pack.scanner) continue;
    if (!rule.scan_note.empty()) {
      stats.scan_fallbacks.push_back(rule.def.id + ": " + rule.scan_note);
    } else if (rule.scan == detail::ScanMode::Literal) {
      ++stats.scan_literal_rules;
    } else if (rule.scan == detail::ScanMode::Regex) {
      ++stats.scan_regex_rules;
    }
  }
  return stats;
}

std::vector<KindRole> kind_roles(const RulePack& pack) {
  std::map<std::string, KindRole> roles;
  for (const auto& rule : pack.extraction) roles[rule.def.kind].kind = rule.def.kind;
  for (const auto& rule : pack.correlation) {  // by (precedence desc, id): sorted below
    const auto& def = rule.def;
    roles[def.root.kind].roots.push_back(def.id + " " + def.domain + " " + def.confidence);
    for (const auto& pattern : def.explains) {
      auto& by = roles[pattern.kind].explained_by;
      if (std::find(by.begin(), by.end(), def.id) == by.end()) by.push_back(def.id);
    }
  }
  for (const auto& kind : pack.benign_kinds) roles[kind].benign = true;
  std::vector<KindRole> out;
  for (auto& [kind, role] : roles) {
    std::sort(role.roots.begin(), role.roots.end());
    std::sort(role.explained_by.begin(), role.explained_by.end());
    out.push_back(std::move(role));
  }
  return out;
}

std::vector<CatalogEntry> catalog_entries(const RulePack& pack, const std::string& table) {
  std::vector<CatalogEntry> out;
  auto it = pack.catalogs.find(table);
  if (it == pack.catalogs.end()) return out;
  for (const auto& [key, entry] : it->second.entries) out.push_back(entry);
  std::sort(out.begin(), out.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
    if (a.key.size() != b.key.size()) return a.key.size() < b.key.size();  // numeric order for digit keys
    return a.key < b.key;
  });
  return out;
}

}  // namespace attrib::rules

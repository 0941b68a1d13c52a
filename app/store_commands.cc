#include "app/store_commands.h"

#include <iostream>
#include <memory>

#include "store/store_file.h"

namespace gauntlet::app {

namespace {
struct StoreArgs {
  std::string db = "./var/gauntlet.db", out;
  bool full = false;
};

int Doctor(const StoreArgs& a) {
  if (Status empty = store::CheckNotEmpty(a.db); !empty.ok()) {
    std::cout << "damaged: " << empty.message() << "\n";
    return 1;
  }
  auto c = store::CheckStoreFile(a.db, a.full);
  if (!c.ok()) {
    std::cerr << "gauntlet doctor: " << c.status().message() << "\n";
    return c.status().code() == Code::kNotFound ? 2 : 1;
  }
  const char* check = a.full ? "integrity_check" : "quick_check";
  if (c->ok) {
    std::cout << "ok: " << a.db << " passed PRAGMA " << check << " (" << c->pages << " pages of " << c->page_size
              << " bytes, schema version " << c->user_version << ")\n";
    return 0;
  }
  std::cout << "damaged: " << a.db << " fails PRAGMA " << check << ":\n";
  for (auto& p : c->problems) std::cout << "  " << p << "\n";
  std::cout << "fix: " << store::DamagedStoreMessage(a.db, c->problems) << "\n";
  return 1;
}

int Backup(const StoreArgs& a) {
  auto c = store::BackupStore(a.db, a.out);
  if (!c.ok()) {
    std::cerr << "gauntlet backup: " << c.status().message() << "\n";
    return c.status().code() == Code::kInvalid ? 2 : 1;
  }
  std::cout << "backed up " << a.db << " to " << a.out << " (" << c->pages << " pages of " << c->page_size
            << " bytes; the copy passed PRAGMA quick_check)\n";
  return 0;
}
}  // namespace

void AddStoreCommands(CLI::App& app, int* code) {
  auto args = std::make_shared<StoreArgs>();
  auto doctor = app.add_subcommand("doctor", "Check a store file (PRAGMA quick_check) and say what it found");
  doctor->add_option("--db", args->db, "the SQLite file (a running daemon's is fine)")->capture_default_str();
  doctor->add_flag("--full", args->full, "PRAGMA integrity_check: slower, also checks every index against its table");
  doctor->callback([args, code] { *code = Doctor(*args); });
  auto backup = app.add_subcommand("backup", "Copy a store consistently, while its daemon runs (SQLite's online backup)");
  backup->add_option("--db", args->db, "the SQLite file to copy")->capture_default_str();
  backup->add_option("out", args->out, "the copy: a new file (never overwritten)")->required();
  backup->callback([args, code] { *code = Backup(*args); });
}

}  // namespace gauntlet::app

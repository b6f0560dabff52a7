// Failed and degraded links and devices: from the start (routes and NCCL's
// plan around them) and striking mid-run (traffic re-sent, or NCCL's abort
// said), with figures computed by hand from the links that remain.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>

#include "e2e/cli_json.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::run_json;
using fabsim::testing::topology;
using nlohmann::json;

namespace {

double busbw(const json& doc) { return doc["rows"][0]["busbw_GBps"].get<double>(); }
double time_us(const json& doc) { return doc["rows"][0]["time_us"].get<double>(); }

const json& link_named(const json& doc, const std::string& name) {
  for (const auto& l : doc["links"])
    if (l["link"] == name) return l;
  FAIL("no link " << name);
  throw std::logic_error("unreachable");
}

/// Bytes over every link direction touching a device whose name starts with `prefix`.
double bytes_touching(const json& doc, const std::string& prefix) {
  double total = 0;
  for (const auto& l : doc["links"]) {
    const std::string name = l["link"];
    const auto arrow = name.find("->");
    if (name.rfind(prefix, 0) == 0 || name.compare(arrow + 2, prefix.size(), prefix) == 0) total += l["bytes"].get<double>();
  }
  return total;
}

}  // namespace

TEST_CASE("gpu0 losing its 5 links to one NVSwitch of an HGX H100 keeps 13 of 18: the ring's busbw is 13 links' worth", "[faults]") {
  const std::string run = "nccl-test -t " + topology("hgx-h100") + " --algo ring -b 1G -e 1G --links";
  const json faulted = run_json(run + " --fault gpu0~nvswitch0=down");
  // Every link of the failed bundle is marked and carries nothing.
  for (const char* name : {"gpu0->nvswitch0", "nvswitch0->gpu0"}) {
    const auto& l = link_named(faulted, name);
    CHECK(l["fault"] == "gpu0~nvswitch0=down");
    CHECK(l["bytes"] == 0);
  }
  CHECK(faulted["meta"]["faults"][0]["fault"] == "gpu0~nvswitch0=down");
  CHECK(faulted["meta"]["faults"][0]["at_us"].is_null());
  // By hand: an NVLink4 lane's effective rate is the 4-link bundle's over 4;
  // gpu0 sends its 2(n-1)/n share of the buffer over 13 lanes, and busbw is
  // that rate when the ring is bound by gpu0's links.
  const double lane = link_named(faulted, "gpu0->nvswitch1")["effective_GBps"].get<double>() / 4;
  CHECK(lane == Approx(20.6).epsilon(0.01));
  CHECK(busbw(faulted) <= 13 * lane);
  CHECK(busbw(faulted) >= 0.97 * 13 * lane);
  // And the traffic went over gpu0's remaining 13 lanes in proportion: 4, 4 and 5.
  const double b1 = link_named(faulted, "gpu0->nvswitch1")["bytes"].get<double>();
  const double b3 = link_named(faulted, "gpu0->nvswitch3")["bytes"].get<double>();
  CHECK(b3 / b1 == Approx(5.0 / 4.0).epsilon(0.01));
  const json healthy = run_json(run);
  CHECK(busbw(faulted) < 0.76 * busbw(healthy));
  // The flow level agrees.
  const json flow = run_json(run + " --model flow --fault gpu0~nvswitch0=down");
  CHECK(busbw(flow) == Approx(busbw(faulted)).epsilon(0.02));
}

TEST_CASE("a bundle trained down to half its rate halves its bandwidth and slows every ring through it", "[faults]") {
  const std::string run = "nccl-test -t " + topology("hgx-h100") + " --algo ring -b 1G -e 1G --links --fault gpu3~nvswitch1=0.5";
  const json doc = run_json(run);
  const auto& l = link_named(doc, "gpu3->nvswitch1");
  CHECK(l["fault"] == "gpu3~nvswitch1=0.5");
  CHECK(l["effective_GBps"].get<double>() == Approx(2 * 20.6).epsilon(0.01));  // 4 lanes at half rate
  // gpu3 keeps 18 - 2 = 16 lanes' worth; the ring cannot beat it.
  CHECK(busbw(doc) <= 16 * 20.6);
  CHECK(busbw(doc) >= 0.97 * 16 * 20.6 * 0.96);  // as the healthy ring, which reaches 96% of its 18 lanes
}

TEST_CASE("a rail's leaf failing on two HGX nodes: its traffic moves to the other rails through PXN, busbw 7/8", "[faults]") {
  const std::string run = "nccl-test -t " + topology("hgx-h100-2node") + " --algo ring -b 1G -e 1G --model flow --links";
  const json healthy = run_json(run);
  const json faulted = run_json(run + " --fault leaf0=down");
  CHECK(bytes_touching(faulted, "leaf0") == 0.0);
  CHECK(bytes_touching(healthy, "leaf0") > 0.0);
  // What leaf0 carried, the other seven leaves carry now.
  double healthy_leaves = 0, faulted_leaves = 0;
  for (int leaf = 0; leaf < 8; ++leaf) {
    healthy_leaves += bytes_touching(healthy, "leaf" + std::to_string(leaf));
    faulted_leaves += bytes_touching(faulted, "leaf" + std::to_string(leaf));
  }
  CHECK(faulted_leaves == Approx(healthy_leaves).epsilon(0.001));
  // PXN: node0's GPU 0 reaches the network over NVLink through a peer, not through the CPU.
  CHECK(link_named(faulted, "node0.pcie0->node0.host")["bytes"].get<double>() == 0.0);
  // By hand: 8 rails' traffic on 7 NICs, so 7/8 of the healthy busbw.
  CHECK(busbw(faulted) == Approx(busbw(healthy) * 7 / 8).epsilon(0.01));
  // The NIC failing instead costs the same: its rail has no other way out of node0.
  CHECK(busbw(run_json(run + " --fault node0.nic0=down")) == Approx(busbw(faulted)).epsilon(0.001));
}

TEST_CASE("a degradation striking mid-run: the run is the healthy rate until then and the degraded rate after", "[faults]") {
  const std::string run = "nccl-test -t " + topology("hgx-h100") + " --algo ring -b 1G -e 1G --model flow";
  const double healthy = time_us(run_json(run));
  const double degraded = time_us(run_json(run + " --fault gpu0~nvswitch0=0.5"));
  const json mid = run_json(run + " --fault gpu0~nvswitch0=0.5@2ms");
  // By hand: 2 ms at the healthy rate do 2000/healthy of the work; the rest takes that share of the degraded time.
  const double expected = 2000 + (1 - 2000 / healthy) * degraded;
  CHECK(time_us(mid) == Approx(expected).epsilon(0.005));
  const auto& fault = mid["meta"]["faults"][0];
  CHECK(fault["at_us"] == 2000.0);
  CHECK(fault["transfers_restriped"].get<int>() > 0);
  // A degradation at time 0 is the same run as one from the start.
  CHECK(time_us(run_json(run + " --fault gpu0~nvswitch0=0.5@0ns")) == Approx(degraded).epsilon(1e-6));
}

TEST_CASE("a network link failing under traffic: the flows on it wait one InfiniBand retransmit timeout, then take the new route", "[faults]") {
  // 64 GPUs on 2 leaf groups of ib-fat-tree-1024: the ring crosses the spines.
  const std::string run = "nccl-test -t " + topology("ib-fat-tree-1024") + " -g 512 --algo ring -b 1G -e 1G --model flow";
  const double healthy = time_us(run_json(run));
  const json hit = run_json(run + " --fault spine0=down@1ms");
  const auto& fault = hit["meta"]["faults"][0];
  REQUIRE(fault["flows_resent"].get<int>() > 0);
  CHECK(fault["bytes_resent"].get<double>() > 0);
  // 4.096 us x 2^20 (NCCL_IB_TIMEOUT=20) after the strike.
  CHECK(fault["resent_at_us"].get<double>() == Approx(1000 + 4.096 * (1 << 20)).epsilon(1e-9));
  CHECK(time_us(hit) > 4.096 * (1 << 20));
  // With a faster detection (e.g. a smaller NCCL_IB_TIMEOUT), the run pays about that much more than healthy.
  const json quick = run_json(run + " --fault spine0=down@1ms --fault-detection 50us");
  CHECK(time_us(quick) > healthy);
  CHECK(time_us(quick) < healthy + 50 + 0.1 * healthy);
  // The same switch failed from the start: the fat tree routes around it at no cost to a ring.
  CHECK(time_us(run_json(run + " --fault spine0=down")) == Approx(healthy).epsilon(0.001));
}

TEST_CASE("an NVLink bundle failing mid-run is re-striped only as a what-if, with the detection delay given", "[faults]") {
  const std::string run = "nccl-test -t " + topology("hgx-h100") + " --algo ring -b 1G -e 1G";
  // By default that is Xid 74 on real hardware: no figure (exit 3).
  CHECK(run_fabsim(run + " --fault gpu0~nvswitch0=down@2ms --format json").exit_code == 3);
  const json doc = run_json(run + " --fault gpu0~nvswitch0=down@2ms --fault-detection 100us");
  CHECK(doc["meta"]["model"] == "flow");  // mid-run faults take the flow level
  const auto& fault = doc["meta"]["faults"][0];
  CHECK(fault["flows_resent"].get<int>() > 0);
  CHECK(fault["resent_at_us"] == 2100.0);
  const double healthy = time_us(run_json(run + " --model flow"));
  const double failed = time_us(run_json(run + " --model flow --fault gpu0~nvswitch0=down"));
  // Between the healthy run and the failed-from-start one, plus at most the detection delay.
  CHECK(time_us(doc) > healthy);
  CHECK(time_us(doc) < failed + 100);
}

TEST_CASE("the faults of a scenario and of a sweep axis", "[faults]") {
  const json scenario = run_json("run hgx-h100-2node-nic-failure");
  CHECK(scenario["meta"]["faults"][0]["fault"] == "node0.nic0=down");
  const auto r = run_fabsim("sweep hgx-h100-2node-failures");
  REQUIRE(r.exit_code == 0);
  // Five points, each a row: healthy first, every failure slower.
  std::vector<double> rates;
  std::istringstream csv(fabsim::testing::csv_body(r.out));
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    CHECK_THAT(line, Catch::Contains(",ok,"));
    const auto ok = line.rfind(",ok,");
    std::size_t comma = ok;
    for (int c = 0; c < 4; ++c) comma = line.rfind(',', comma - 1);  // busbw is the fourth cell before status
    rates.push_back(std::stod(line.substr(comma + 1)));
  }
  REQUIRE(rates.size() == 5);
  for (std::size_t i = 1; i < rates.size(); ++i) CHECK(rates[i] < rates[0]);
}

TEST_CASE("whatif on hgx-h100 ranks the 32 NVLink bundle failures in their 2 classes, worst first", "[faults]") {
  const json doc = run_json("whatif -t hgx-h100 --algo ring -b 256M --model flow");
  REQUIRE(doc["rows"].size() == 2);
  int members = 0;
  for (const auto& row : doc["rows"]) members += row["equivalent_faults"].get<int>();
  CHECK(members == 32);
  // The 5-link bundles hurt more than the 4-link ones: 13 of 18 lanes left against 14.
  CHECK(doc["rows"][0]["fault"] == "gpu0~nvswitch0=down");
  CHECK(doc["rows"][1]["fault"] == "gpu0~nvswitch1=down");
  const double base = doc["baseline"]["busbw_GBps"].get<double>();
  CHECK(doc["rows"][0]["slowdown"].get<double>() >= doc["rows"][1]["slowdown"].get<double>());
  CHECK(doc["rows"][0]["busbw_GBps"].get<double>() == Approx(base * 13 / 18).epsilon(0.03));
  CHECK(doc["rows"][1]["busbw_GBps"].get<double>() == Approx(base * 14 / 18).epsilon(0.03));
  CHECK(doc["rows"][0]["slowdown"].get<double>() ==
        Approx(doc["rows"][0]["time_us"].get<double>() / doc["baseline"]["time_us"].get<double>()).epsilon(1e-3));
}

TEST_CASE("whatif passes its healthy run's warnings on: the ranking's figures are as doubtful as the run's", "[faults]") {
  const json warned = run_json("whatif -t hgx-h100 --algo ring -b 64M --model flow --nccl-version 2.31.2");
  REQUIRE(warned["meta"]["warnings"].size() == 1);
  CHECK(warned["meta"]["warnings"][0].get<std::string>().find("NCCL 2.31.2 is newer than") == 0);
  CHECK_FALSE(run_json("whatif -t hgx-h100 --algo ring -b 64M --model flow")["meta"].contains("warnings"));
}

TEST_CASE("whatif --all: every member of a symmetry class costs what its representative does", "[faults]") {
  const json classes = run_json("whatif -t hgx-h100 --algo ring -b 64M --model flow");
  const json every = run_json("whatif -t hgx-h100 --algo ring -b 64M --model flow --all -j 2");
  REQUIRE(every["rows"].size() == 32);
  std::map<std::string, double> by_fault;
  for (const auto& row : every["rows"]) by_fault[row["fault"]] = row["time_us"].get<double>();
  for (const auto& row : classes["rows"])
    for (const auto& member : row["equivalents"]) CHECK(by_fault.at(member) == Approx(row["time_us"].get<double>()).epsilon(0.005));
}

TEST_CASE("whatif --scope devices on two nodes: a failed NIC costs a rail, and the ranking says which failures cut a GPU off", "[faults]") {
  const json doc = run_json("whatif -t hgx-h100-2node --algo ring -b 256M --model flow --scope all");
  bool saw_nic = false, saw_cut = false;
  for (const auto& row : doc["rows"]) {
    const std::string fault = row["fault"];
    if (fault == "node0.nic0=down") {
      saw_nic = true;
      CHECK(row["busbw_GBps"].get<double>() == Approx(doc["baseline"]["busbw_GBps"].get<double>() * 7 / 8).epsilon(0.02));
    }
    if (row["time_us"].is_null()) {
      saw_cut = true;
      CHECK_THAT(row["outcome"].get<std::string>(), Catch::Contains("partitions the fabric"));
    }
  }
  CHECK(saw_nic);
  CHECK(saw_cut);  // a GPU's only PCIe link: it falls off the bus
  // Rows with no figure lead the ranking.
  CHECK(doc["rows"][0]["time_us"].is_null());
}

TEST_CASE("replay with a fault mid-run reports the ops it touched, and its timeline marks it", "[faults]") {
  const std::string timeline = fabsim::testing::write_temp("faults-timeline.json", "");
  const auto r = run_fabsim("replay -t hgx-h100-2node tp8-pp2-2node-step --model flow --fault spine0=down@10us --fault "
                            "node0.gpu1~node0.nvswitch2=0.5@20us --timeline " + timeline + " --format json");
  // hgx-h100-2node has no spine: the first fault names nothing there.
  CHECK(r.exit_code == 2);
  const json doc = run_json("replay -t hgx-h100-2node tp8-pp2-2node-step --model flow --fault node0.gpu1~node0.nvswitch2=0.5@20us "
                            "--timeline " + timeline);
  const auto& fault = doc["meta"]["faults"][0];
  CHECK(fault["fault"] == "node0.gpu1~node0.nvswitch2=0.5@20us");
  CHECK(fault["ops_running"].get<int>() + fault["ops_after"].get<int>() > 0);
  CHECK(fault["running_ops"].size() <= fault["ops_running"].get<std::size_t>());
  const json trace = json::parse(std::ifstream(timeline));
  bool marked = false;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "i" && e["name"] == "fault: node0.gpu1~node0.nvswitch2=0.5@20us") marked = e["ts"] == 20.0;
  CHECK(marked);
}

TEST_CASE("replay --whatif ranks single failures by the makespan they cost", "[faults]") {
  const json doc = run_json("replay -t hgx-h100 dp8-ddp-step --whatif links --model flow");
  REQUIRE(doc["rows"].size() == 2);
  CHECK(doc["baseline"]["busbw_GBps"].is_null());
  CHECK(doc["rows"][0]["slowdown"].get<double>() >= 1.0);
  CHECK(doc["rows"][0]["time_us"].get<double>() >= doc["rows"][1]["time_us"].get<double>());
}

TEST_CASE("a GPU with every NVLink bundle failed reaches its peers over PCIe through the CPU, at the PCIe rate", "[faults]") {
  std::string faults;
  for (int s = 0; s < 4; ++s) faults += " --fault node0.gpu0~node0.nvswitch" + std::to_string(s) + "=down";
  const json doc = run_json("nccl-test -t " + topology("hgx-h100-2node") + " -g 8 --algo ring -b 256M -e 256M --model flow --links" + faults);
  const auto& pcie = link_named(doc, "node0.gpu0->node0.pcie0");
  CHECK(pcie["bytes"].get<double>() > 0);
  CHECK(link_named(doc, "node0.pcie0->node0.host")["bytes"] == pcie["bytes"]);
  // By hand: the ring is bound by gpu0's one PCIe Gen5 x16 link each way.
  const double rate = pcie["effective_GBps"].get<double>();
  CHECK(busbw(doc) <= rate);
  CHECK(busbw(doc) >= 0.95 * rate);
}

TEST_CASE("run: a detection delay holds where the merged faults (scenario and flags) have one striking mid-run", "[faults]") {
  const std::string topo = topology("hgx-h100");
  const auto scenario = [&](const std::string& name, const std::string& extra) {
    return fabsim::testing::write_temp(name, R"({"format": "fabsim-scenario/1", "name": "merge", "topology": ")" + topo +
                                         R"(", "workload": {"kind": "nccl-test", "op": "all_reduce", "algo": "ring", )"
                                         R"("min_bytes": "1 GiB", "max_bytes": "1 GiB"}, )" + extra + "}");
  };
  // The scenario's delay, the flag's mid-run fault.
  const auto delay_only = scenario("delay_only.json", R"("fault_detection": "100 us")");
  CHECK(run_fabsim("run " + delay_only + " --format json").exit_code == 2);  // no fault at all: refused
  const json a = run_json("run " + delay_only + " --fault gpu0~nvswitch0=down@2ms");
  CHECK(a["meta"]["faults"][0]["resent_at_us"] == 2100.0);
  // The scenario's mid-run fault, the flag's delay.
  const auto timed = scenario("timed.json", R"("faults": ["gpu0~nvswitch0=down@2ms"])");
  const json b = run_json("run " + timed + " --fault-detection 100us");
  CHECK(b["meta"]["faults"][0]["resent_at_us"] == 2100.0);
}

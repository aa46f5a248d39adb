// crankd: the Crank MCP gateway. See `crankd --help` and docs/.

#include "app/crankd.h"

int main(int argc, char** argv) {
    return crank::app::crankdMain(argc, argv);
}

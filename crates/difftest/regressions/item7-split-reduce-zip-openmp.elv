def s = DFNF ;
  split(3) @ outermost(appliedReduce) ;;
  lowerToC
